package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/storage"
)

// KeyOptions are the settings of a new API key.
type KeyOptions struct {
	Name          string
	ExpiresInDays *int // nil: 30 days
	Never         bool // no expiry
	RateLimit     int  // requests per minute; 0: 1000
}

// maxRateLimit bounds the per-key window so a key's log stays small.
const maxRateLimit = 100000

func (o KeyOptions) newKey(orgID, userID string) (storage.NewKey, string, error) {
	if len(o.Name) > 100 {
		return storage.NewKey{}, "", badRequest("name: at most 100 characters")
	}
	if o.RateLimit < 0 || o.RateLimit > maxRateLimit {
		return storage.NewKey{}, "", badRequest(fmt.Sprintf("rateLimitPerMinute: must be 1 to %d", maxRateLimit))
	}
	limit := o.RateLimit
	if limit == 0 {
		limit = defaultLimit
	}
	var exp *time.Time
	if !o.Never {
		ttl := keyTTL
		if o.ExpiresInDays != nil {
			d := *o.ExpiresInDays
			if d < 1 || d > 3650 {
				return storage.NewKey{}, "", badRequest("expiresInDays: must be 1 to 3650, or null for a key that never expires")
			}
			ttl = time.Duration(d) * 24 * time.Hour
		}
		t := time.Now().UTC().Add(ttl)
		exp = &t
	}
	name := o.Name
	if name == "" {
		name = "default"
	}
	key, hash, display := newKeySecret()
	return storage.NewKey{OrgID: orgID, UserID: userID, Name: name, Prefix: display, Hash: hash,
		RateLimit: limit, ExpiresAt: exp}, key, nil
}

// CreateKey creates a key for a user of an organization and returns the
// secret, which is never stored and never shown again.
func CreateKey(ctx context.Context, db *storage.DB, orgID, userID string, o KeyOptions) (string, storage.APIKey, error) {
	nk, secret, err := o.newKey(orgID, userID)
	if err != nil {
		return "", storage.APIKey{}, err
	}
	k, err := db.CreateKey(ctx, nk)
	return secret, k, err
}

// CreateOrg creates an organization with its owner and the owner's key.
func CreateOrg(ctx context.Context, db *storage.DB, name, ownerEmail string) (storage.Org, string, storage.APIKey, error) {
	if err := validOrgName(name); err != nil {
		return storage.Org{}, "", storage.APIKey{}, err
	}
	if err := ValidEmail(ownerEmail); err != nil {
		return storage.Org{}, "", storage.APIKey{}, err
	}
	nk, secret, err := KeyOptions{Name: "owner"}.newKey("", "")
	if err != nil {
		return storage.Org{}, "", storage.APIKey{}, err
	}
	o, _, k, err := db.CreateOrgWithOwner(ctx, name, ownerEmail, nk)
	return o, secret, k, err
}

// Bootstrap creates organization "default" with owner owner@localhost on an
// empty database and returns the owner key; created is false otherwise.
func Bootstrap(ctx context.Context, db *storage.DB) (key string, created bool, err error) {
	nk, secret, err := KeyOptions{Name: "owner"}.newKey("", "")
	if err != nil {
		return "", false, err
	}
	created, err = db.Bootstrap(ctx, "default", "owner@localhost", nk)
	if !created {
		secret = ""
	}
	return secret, created, err
}

func validOrgName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 100 {
		return badRequest("organization name: 1 to 100 characters")
	}
	return nil
}

// ValidEmail checks a user email.
func ValidEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return badRequest(fmt.Sprintf("email %q: not a valid address", email))
	}
	return nil
}

// keyJSON is a key as the API shows it (never the secret).
func keyJSON(k storage.APIKey, now time.Time) map[string]any {
	status := "active"
	switch {
	case k.RevokedAt != nil:
		status = "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		status = "expired"
	}
	return map[string]any{
		"id": k.ID, "name": k.Name, "prefix": k.Prefix, "createdBy": k.UserEmail,
		"rateLimitPerMinute": k.RateLimit, "status": status,
		"expiresAt": formatTimePtr(k.ExpiresAt), "revokedAt": formatTimePtr(k.RevokedAt),
		"createdAt": formatTime(k.CreatedAt),
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if _, err := s.db.AuthEpoch(r.Context()); err != nil {
		return &Error{Kind: errs.Unavailable, Message: "database unavailable", Err: err}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": s.cfg.Version})
	return nil
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body struct {
		Name          string          `json:"name"`
		ExpiresInDays json.RawMessage `json:"expiresInDays"`
		RateLimit     int             `json:"rateLimitPerMinute"`
	}
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	o := KeyOptions{Name: strings.TrimSpace(body.Name), RateLimit: body.RateLimit}
	switch v := strings.TrimSpace(string(body.ExpiresInDays)); {
	case v == "":
	case v == "null" || v == `"never"`:
		o.Never = true
	default:
		var d int
		if err := json.Unmarshal(body.ExpiresInDays, &d); err != nil {
			return badRequest("expiresInDays: must be an integer number of days, or null for a key that never expires")
		}
		o.ExpiresInDays = &d
	}
	p := principalFrom(r.Context())
	secret, k, err := CreateKey(r.Context(), s.db, p.OrgID, p.UserID, o)
	if err != nil {
		return err
	}
	out := keyJSON(k, s.now())
	out["key"] = secret
	writeJSON(w, http.StatusCreated, map[string]any{"data": out, "meta": s.meta()})
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ks, err := s.db.ListKeys(r.Context(), orgID(r))
	if err != nil {
		return err
	}
	now := s.now()
	out := make([]map[string]any, 0, len(ks))
	for _, k := range ks {
		out = append(out, keyJSON(k, now))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"keys": out, "count": len(out)}, "meta": s.meta()})
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	if err := s.db.RevokeKey(r.Context(), orgID(r), id); err != nil {
		if isNotFound(err) {
			return notFound("API key not found")
		}
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": id, "revoked": true}, "meta": s.meta()})
	return nil
}
