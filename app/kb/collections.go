package kb

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Collection limits (DECISIONS.md "Knowledge base").
const (
	maxCollectionName        = 200
	maxCollectionDescription = 2000
)

// CollectionInput is a new collection as the API takes it.
type CollectionInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	SearchAlpha *float64 `json:"searchAlpha"`
}

// CollectionPatch is a partial update of a collection: absent fields keep
// their value; searchAlpha null goes back to the embedder's default.
type CollectionPatch struct {
	Name        *string       `json:"name"`
	Description *string       `json:"description"`
	SearchAlpha OptionalFloat `json:"searchAlpha"`
}

// OptionalFloat is a JSON number that tells absent (Set false) from null
// (Set true, Value nil).
type OptionalFloat struct {
	Set   bool
	Value *float64
}

// UnmarshalJSON records that the field was present.
func (o *OptionalFloat) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.Value)
}

// validName trims and checks a collection name.
func validName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return name, invalid("name", "name is required")
	case utf8.RuneCountInString(name) > maxCollectionName:
		return name, invalid("name", "name too long, max 200 characters")
	}
	return name, nil
}

// validAlpha checks a semantic weight (path names the field).
func validAlpha(path string, a *float64) error {
	if a != nil && !(*a >= 0 && *a <= 1) {
		return invalid(path, path+" must be a number from 0 to 1")
	}
	return nil
}

// conflict is the error of a name taken in the organization. No cause
// attached: the CLI prints Error() as the whole message.
func conflict(name string) error {
	return errs.New(errs.Conflict, `a collection named "`+name+`" already exists`)
}

// CreateCollection validates and creates a collection of the organization.
// The API and the CLI both create through it, so both refuse the same names.
func (s *Service) CreateCollection(ctx context.Context, orgID, name, description string) (kbstore.Collection, error) {
	return s.Create(ctx, orgID, CollectionInput{Name: name, Description: description})
}

// Create validates and creates a collection with its settings.
func (s *Service) Create(ctx context.Context, orgID string, in CollectionInput) (kbstore.Collection, error) {
	name, err := validName(in.Name)
	if err != nil {
		return kbstore.Collection{}, err
	}
	if utf8.RuneCountInString(in.Description) > maxCollectionDescription {
		return kbstore.Collection{}, invalid("description", "description too long, max 2000 characters")
	}
	if err := validAlpha("searchAlpha", in.SearchAlpha); err != nil {
		return kbstore.Collection{}, err
	}
	c, err := s.db.KB.CreateCollectionWith(ctx, kbstore.Collection{OrgID: orgID, Name: name, Description: in.Description, SearchAlpha: in.SearchAlpha})
	if errors.Is(err, sqldb.ErrConflict) {
		return c, conflict(name)
	}
	return c, err
}

// UpdateCollection validates and applies a partial update to a collection
// of the organization.
func (s *Service) UpdateCollection(ctx context.Context, orgID, id string, p CollectionPatch) (kbstore.Collection, error) {
	c, err := s.Collection(ctx, orgID, id)
	if err != nil {
		return c, err
	}
	u := kbstore.CollectionUpdate{Description: p.Description, SetSearchAlpha: p.SearchAlpha.Set, SearchAlpha: p.SearchAlpha.Value}
	if p.Name != nil {
		name, err := validName(*p.Name)
		if err != nil {
			return c, err
		}
		u.Name = &name
	}
	if p.Description != nil && utf8.RuneCountInString(*p.Description) > maxCollectionDescription {
		return c, invalid("description", "description too long, max 2000 characters")
	}
	if err := validAlpha("searchAlpha", p.SearchAlpha.Value); err != nil {
		return c, err
	}
	c, err = s.db.KB.UpdateCollection(ctx, orgID, c.ID, u)
	switch {
	case errors.Is(err, sqldb.ErrConflict):
		return c, conflict(*u.Name)
	case errors.Is(err, sqldb.ErrNotFound):
		return c, errs.Wrap(errs.NotFound, "collection not found", err)
	}
	return c, err
}

// Collection loads a collection of the organization by id; another
// organization's collection is the same not-found as a missing one.
func (s *Service) Collection(ctx context.Context, orgID, id string) (kbstore.Collection, error) {
	if id == "" {
		return kbstore.Collection{}, invalid("collectionId", "collectionId is required")
	}
	c, err := s.db.KB.GetCollection(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return c, errs.Wrap(errs.NotFound, "collection not found", err)
	}
	return c, err
}

// FindCollection loads a collection of the organization by name or id (the
// CLI lets people type either).
func (s *Service) FindCollection(ctx context.Context, orgID, nameOrID string) (kbstore.Collection, error) {
	return s.db.KB.FindCollection(ctx, orgID, nameOrID)
}

// ListCollections is one page of the organization's collections and their
// total count.
func (s *Service) ListCollections(ctx context.Context, orgID string, p Page) ([]kbstore.Collection, int, error) {
	return s.db.KB.ListCollections(ctx, orgID, p.Limit, p.Offset)
}

// checkCollection is Collection without the source count, which costs time
// in proportion to the sources: for searches and source writes, which only
// need to know the collection is the organization's.
func (s *Service) checkCollection(ctx context.Context, orgID, id string) (kbstore.Collection, error) {
	if id == "" {
		return kbstore.Collection{}, invalid("collectionId", "collectionId is required")
	}
	c, err := s.db.KB.CheckCollection(ctx, orgID, id)
	if errors.Is(err, sqldb.ErrNotFound) {
		return c, errs.Wrap(errs.NotFound, "collection not found", err)
	}
	return c, err
}

// DeleteCollection deletes a collection of the organization by id,
// returning what was deleted (not found when it is not the caller's).
func (s *Service) DeleteCollection(ctx context.Context, orgID, id string) (kbstore.Collection, error) {
	c, err := s.Collection(ctx, orgID, id)
	if err != nil {
		return c, err
	}
	return c, s.db.KB.DeleteCollection(ctx, orgID, c.ID)
}
