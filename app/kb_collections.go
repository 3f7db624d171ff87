package app

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// kbCollectionJSON is a collection as the API shows it.
func kbCollectionJSON(c storage.Collection) map[string]any {
	return map[string]any{"id": c.ID, "name": c.Name, "description": c.Description, "sourceCount": c.SourceCount,
		"createdAt": formatTime(c.CreatedAt), "updatedAt": formatTime(c.UpdatedAt)}
}

// CreateCollection validates and creates a collection (API and CLI).
func CreateCollection(ctx context.Context, db *storage.DB, orgID, name, description string) (storage.Collection, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return storage.Collection{}, badRequest("name is required")
	case utf8.RuneCountInString(name) > 200:
		return storage.Collection{}, badRequest("name too long, max 200 characters")
	case utf8.RuneCountInString(description) > 2000:
		return storage.Collection{}, badRequest("description too long, max 2000 characters")
	}
	c, err := db.CreateCollection(ctx, orgID, name, description)
	if errors.Is(err, storage.ErrConflict) {
		return c, &Error{Kind: errs.Conflict, Message: "a collection named " + kbQuote(name) + " already exists"}
	}
	return c, err
}

func kbQuote(s string) string { return `"` + s + `"` }

func (s *Server) createCollection(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	c, err := CreateCollection(r.Context(), s.db, orgID(r), body.Name, body.Description)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"data": kbCollectionJSON(c), "meta": s.meta()})
	return nil
}

func (s *Server) listCollections(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	limit, offset, err := kbPageParams(r)
	if err != nil {
		return err
	}
	cs, total, err := s.db.ListCollections(r.Context(), orgID(r), limit, offset)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(cs))
	for i, c := range cs {
		out[i] = kbCollectionJSON(c)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"collections": out,
		"pagination": kbPagination(total, limit, offset)}, "meta": s.meta()})
	return nil
}

func (s *Server) getCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	c, err := s.collection(r, p.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": kbCollectionJSON(c), "meta": s.meta()})
	return nil
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	c, err := s.collection(r, p.ByName("id"))
	if err != nil {
		return err
	}
	if err := s.db.DeleteCollection(r.Context(), orgID(r), c.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": c.ID, "deleted": true,
		"message": "collection and its sources deleted"}, "meta": s.meta()})
	return nil
}

// collection loads a collection of the caller's organization; another
// organization's collection is the same 404 as a missing one.
func (s *Server) collection(r *http.Request, id string) (storage.Collection, error) {
	if id == "" {
		return storage.Collection{}, badRequest("collectionId is required")
	}
	c, err := s.db.GetCollection(r.Context(), orgID(r), id)
	if isNotFound(err) {
		return c, &Error{Kind: errs.NotFound, Message: "collection not found", Err: err}
	}
	return c, err
}

// kbPageParams reads limit (default 50, 1-100) and offset (default 0).
func kbPageParams(r *http.Request) (int, int, error) {
	q := r.URL.Query()
	limit, offset := 50, 0
	if v := q.Get("limit"); v != "" {
		n, ok := kbAtoi(v)
		if !ok || n < 1 || n > 100 {
			return 0, 0, badRequest("limit must be an integer between 1 and 100")
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, ok := kbAtoi(v)
		if !ok || n < 0 {
			return 0, 0, badRequest("offset must be a non-negative integer")
		}
		offset = n
	}
	return limit, offset, nil
}

// kbAtoi parses a small non-negative decimal integer (no sign, no spaces).
func kbAtoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func kbPagination(total, limit, offset int) map[string]any {
	return map[string]any{"total": total, "limit": limit, "offset": offset, "hasMore": offset+limit < total}
}
