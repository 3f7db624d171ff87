package web

import (
	"net/http"
	"strings"

	"github.com/agentd/agentd/app/access"
)

const membersPerPage = 50

type membersData struct {
	Members []access.User
	Roles   []string
	Pager   pager
	Self    string // the signed-in user's id: no remove button on their row
}

// membersPage lists the organization's members; owners and admins also
// add members, change roles and remove them (access decides who may touch
// an owner).
func (s *Site) membersPage(w http.ResponseWriter, r *http.Request, u user) error {
	us, err := s.cfg.Access.Members(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	offset := pageParams(r)
	end := min(offset+membersPerPage, len(us))
	shown := us[min(offset, len(us)):end]
	d := membersData{Members: shown, Roles: access.Roles, Self: u.UserID,
		Pager: newPager(r, offset, membersPerPage, len(shown), len(us), false)}
	s.render(w, r, http.StatusOK, "members", page{Title: "Members", Nav: "members", User: u, Data: d})
	return nil
}

func actor(u user) access.Actor { return access.Actor{UserID: u.UserID, Role: u.Role} }

func (s *Site) addMember(w http.ResponseWriter, r *http.Request, u user) error {
	role := r.PostFormValue("role")
	if role == "" {
		role = "member"
	}
	m, err := s.cfg.Access.AddMember(r.Context(), actor(u), u.OrgID, strings.TrimSpace(r.PostFormValue("email")), role)
	if err != nil {
		return err
	}
	redirect(w, r, "/members", m.Email+" added as "+m.Role+": they set a password with `agentd user password "+m.Email+"`")
	return nil
}

func (s *Site) changeRole(w http.ResponseWriter, r *http.Request, u user) error {
	m, err := s.cfg.Access.ChangeRole(r.Context(), actor(u), u.OrgID, r.PathValue("id"), r.PostFormValue("role"))
	if err != nil {
		return err
	}
	redirect(w, r, "/members", m.Email+" is now "+m.Role)
	return nil
}

func (s *Site) removeMember(w http.ResponseWriter, r *http.Request, u user) error {
	if err := s.cfg.Access.RemoveMember(r.Context(), actor(u), u.OrgID, r.PathValue("id")); err != nil {
		return err
	}
	redirect(w, r, "/members", "Member removed")
	return nil
}
