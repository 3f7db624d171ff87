package access

import (
	"context"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
)

// Actor is who asks for a change to the members of an organization.
type Actor struct {
	UserID string
	Role   string
}

// Members lists the users of an organization, oldest first.
func (db *Service) Members(ctx context.Context, orgID string) ([]orgstore.User, error) {
	return db.orgs.ListUsers(ctx, orgID)
}

// AddMember adds a user with a role. Only an owner may add an owner.
func (db *Service) AddMember(ctx context.Context, a Actor, orgID, email, role string) (orgstore.User, error) {
	if err := ValidEmail(email); err != nil {
		return orgstore.User{}, err
	}
	if err := checkRole(a, role); err != nil {
		return orgstore.User{}, err
	}
	u, err := db.orgs.AddUser(ctx, orgID, email, role)
	if isConflict(err) {
		return u, errs.Wrap(errs.Conflict, "a member with this email exists", err)
	}
	return u, err
}

// ChangeRole gives a member another role. Only an owner may touch an owner
// or make one; the last owner keeps the role.
func (db *Service) ChangeRole(ctx context.Context, a Actor, orgID, userID, role string) (orgstore.User, error) {
	u, err := db.member(ctx, orgID, userID)
	if err != nil {
		return u, err
	}
	if err := checkRole(a, role); err != nil {
		return orgstore.User{}, err
	}
	if u.Role == "owner" {
		if a.Role != "owner" {
			return u, errs.New(errs.Forbidden, "only an owner may change an owner's role")
		}
		if role != "owner" {
			if err := db.keepAnOwner(ctx, orgID, userID); err != nil {
				return u, err
			}
		}
	}
	return db.orgs.SetUserRole(ctx, orgID, userID, role)
}

// RemoveMember removes a member with their keys and sessions. Nobody removes
// themself (an owner would lock the organization out); only an owner removes
// an owner.
func (db *Service) RemoveMember(ctx context.Context, a Actor, orgID, userID string) error {
	if userID == a.UserID {
		return errs.New(errs.Conflict, "you cannot remove yourself")
	}
	u, err := db.member(ctx, orgID, userID)
	if err != nil {
		return err
	}
	if u.Role == "owner" {
		if a.Role != "owner" {
			return errs.New(errs.Forbidden, "only an owner may remove an owner")
		}
		if err := db.keepAnOwner(ctx, orgID, userID); err != nil {
			return err
		}
	}
	return db.orgs.RemoveUserByID(ctx, orgID, userID)
}

func checkRole(a Actor, role string) error {
	if !ValidRole(role) {
		return errs.InvalidField("role", "must be one of owner, admin, member, viewer")
	}
	if role == "owner" && a.Role != "owner" {
		return errs.New(errs.Forbidden, "only an owner may make an owner")
	}
	return nil
}

func (db *Service) member(ctx context.Context, orgID, userID string) (orgstore.User, error) {
	u, err := db.orgs.UserByID(ctx, orgID, userID)
	if isNotFound(err) {
		return u, errs.Wrap(errs.NotFound, "member not found", err)
	}
	return u, err
}

// keepAnOwner refuses a change that would leave the organization without
// an owner.
func (db *Service) keepAnOwner(ctx context.Context, orgID, leaving string) error {
	us, err := db.orgs.ListUsers(ctx, orgID)
	if err != nil {
		return err
	}
	for _, u := range us {
		if u.Role == "owner" && u.ID != leaving {
			return nil
		}
	}
	return errs.New(errs.Conflict, "the organization needs at least one owner")
}
