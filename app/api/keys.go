package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
)

// keyView is a key as the API shows it (never the secret, but on creation).
type keyView struct {
	CreatedAt          string  `json:"createdAt"`
	CreatedBy          string  `json:"createdBy"`
	ExpiresAt          *string `json:"expiresAt"`
	ID                 string  `json:"id"`
	Key                string  `json:"key,omitempty"`
	Name               string  `json:"name"`
	Prefix             string  `json:"prefix"`
	RateLimitPerMinute int     `json:"rateLimitPerMinute"`
	RevokedAt          *string `json:"revokedAt"`
	Status             string  `json:"status"`
}

func newKeyView(k orgstore.APIKey, now time.Time) keyView {
	return keyView{CreatedAt: formatTime(k.CreatedAt), CreatedBy: k.UserEmail, ExpiresAt: timePtr(k.ExpiresAt),
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, RateLimitPerMinute: k.RateLimit,
		RevokedAt: timePtr(k.RevokedAt), Status: access.KeyStatus(k, now)}
}

// timePtr formats an optional time; nil stays null.
func timePtr(t *time.Time) *string { return apitime.Ptr(t) }

// envelope is the {data, meta} body of every /v2 success.
type envelope[T any] struct {
	Data T        `json:"data"`
	Meta metaView `json:"meta"`
}

// metaView is the meta object of an envelope.
type metaView struct {
	Timestamp string `json:"timestamp"`
}

func (s *Server) envelope(v any) envelope[any] {
	return envelope[any]{Data: v, Meta: metaView{formatTime(s.now())}}
}

type healthView struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

type keyListView struct {
	Count int       `json:"count"`
	Keys  []keyView `json:"keys"`
}

type keyRevokedView struct {
	ID      string `json:"id"`
	Revoked bool   `json:"revoked"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if _, err := s.stores.Epoch.AuthEpoch(r.Context()); err != nil {
		return &Error{Kind: errs.Unavailable, Message: errs.DBUnavailable, Err: err}
	}
	httpx.WriteJSON(w, http.StatusOK, healthView{Status: "ok", Version: s.cfg.Version})
	return nil
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var body struct {
		Name          string          `json:"name"`
		ExpiresInDays json.RawMessage `json:"expiresInDays"`
		RateLimit     int             `json:"rateLimitPerMinute"`
	}
	if err := httpx.Decode(r, &body); err != nil {
		return err
	}
	o := access.KeyOptions{Name: strings.TrimSpace(body.Name), RateLimit: body.RateLimit}
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
	p := httpx.PrincipalOf(r.Context())
	secret, k, err := s.access.CreateKey(r.Context(), p.OrgID, p.UserID, o)
	if err != nil {
		return err
	}
	out := newKeyView(k, s.now())
	out.Key = secret
	httpx.WriteJSON(w, http.StatusCreated, s.envelope(out))
	return nil
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ks, err := s.stores.Orgs.ListKeys(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	now := s.now()
	out := make([]keyView, 0, len(ks))
	for _, k := range ks {
		out = append(out, newKeyView(k, now))
	}
	httpx.WriteJSON(w, http.StatusOK, s.envelope(keyListView{Count: len(out), Keys: out}))
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	pr := httpx.PrincipalOf(r.Context())
	if err := s.access.RevokeKey(r.Context(), access.Actor{UserID: pr.UserID, Role: pr.Role}, httpx.OrgID(r), id); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s.envelope(keyRevokedView{ID: id, Revoked: true}))
	return nil
}
