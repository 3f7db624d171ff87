package kb

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// Collection limits (DECISIONS.md "Knowledge base").
const (
	maxCollectionName        = 200
	maxCollectionDescription = 2000
)

// CreateCollection validates and creates a collection of the organization.
// The API and the CLI both create through it, so both refuse the same names.
func CreateCollection(ctx context.Context, db *storage.DB, orgID, name, description string) (storage.Collection, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return storage.Collection{}, invalid("name", "name is required")
	case utf8.RuneCountInString(name) > maxCollectionName:
		return storage.Collection{}, invalid("name", "name too long, max 200 characters")
	case utf8.RuneCountInString(description) > maxCollectionDescription:
		return storage.Collection{}, invalid("description", "description too long, max 2000 characters")
	}
	c, err := db.CreateCollection(ctx, orgID, name, description)
	if errors.Is(err, storage.ErrConflict) {
		// No cause attached: the CLI prints Error() as the whole message.
		return c, errs.New(errs.Conflict, `a collection named "`+name+`" already exists`)
	}
	return c, err
}

// GetCollection loads a collection of the organization by id; another
// organization's collection is the same not-found as a missing one.
func GetCollection(ctx context.Context, db *storage.DB, orgID, id string) (storage.Collection, error) {
	if id == "" {
		return storage.Collection{}, invalid("collectionId", "collectionId is required")
	}
	c, err := db.GetCollection(ctx, orgID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return c, errs.Wrap(errs.NotFound, "collection not found", err)
	}
	return c, err
}

// FindCollection loads a collection of the organization by name or id (the
// CLI lets people type either).
func FindCollection(ctx context.Context, db *storage.DB, orgID, nameOrID string) (storage.Collection, error) {
	return db.FindCollection(ctx, orgID, nameOrID)
}

// ListCollections is one page of the organization's collections and their
// total count.
func ListCollections(ctx context.Context, db *storage.DB, orgID string, p Page) ([]storage.Collection, int, error) {
	return db.ListCollections(ctx, orgID, p.Limit, p.Offset)
}

// DeleteCollection removes a collection with its sources, chunks and vectors.
func DeleteCollection(ctx context.Context, db *storage.DB, orgID, id string) error {
	return db.DeleteCollection(ctx, orgID, id)
}

// CreateCollection is CreateCollection on the server's database.
func (s *Service) CreateCollection(ctx context.Context, orgID, name, description string) (storage.Collection, error) {
	return CreateCollection(ctx, s.db, orgID, name, description)
}

// Collection is GetCollection on the server's database.
func (s *Service) Collection(ctx context.Context, orgID, id string) (storage.Collection, error) {
	return GetCollection(ctx, s.db, orgID, id)
}

// checkCollection is Collection without the source count, which costs time
// in proportion to the sources: for searches and source writes, which only
// need to know the collection is the organization's.
func (s *Service) checkCollection(ctx context.Context, orgID, id string) (storage.Collection, error) {
	if id == "" {
		return storage.Collection{}, invalid("collectionId", "collectionId is required")
	}
	c, err := s.db.CheckCollection(ctx, orgID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return c, errs.Wrap(errs.NotFound, "collection not found", err)
	}
	return c, err
}

// ListCollections is ListCollections on the server's database.
func (s *Service) ListCollections(ctx context.Context, orgID string, p Page) ([]storage.Collection, int, error) {
	return ListCollections(ctx, s.db, orgID, p)
}

// DeleteCollection deletes a collection of the organization by id,
// returning what was deleted (not found when it is not the caller's).
func (s *Service) DeleteCollection(ctx context.Context, orgID, id string) (storage.Collection, error) {
	c, err := GetCollection(ctx, s.db, orgID, id)
	if err != nil {
		return c, err
	}
	return c, DeleteCollection(ctx, s.db, orgID, c.ID)
}
