package keys

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
	return keyView{CreatedAt: apitime.Format(k.CreatedAt), CreatedBy: k.UserEmail, ExpiresAt: timePtr(k.ExpiresAt),
		ID: k.ID, Name: k.Name, Prefix: k.Prefix, RateLimitPerMinute: k.RateLimit,
		RevokedAt: timePtr(k.RevokedAt), Status: access.KeyStatus(k, now)}
}

// timePtr formats an optional time; nil stays null.
func timePtr(t *time.Time) *string { return apitime.Ptr(t) }

// Deps are what the key handlers use: access creates and revokes keys, the
// organizations' store lists them.
type Deps struct {
	Access *access.Service
	Orgs   *orgstore.Orgs
}

// Handlers are the routes' handlers.
type Handlers struct{ d Deps }

// New builds the handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

type keyListView struct {
	Count int       `json:"count"`
	Keys  []keyView `json:"keys"`
}

type keyRevokedView struct {
	ID      string `json:"id"`
	Revoked bool   `json:"revoked"`
}

func (h *Handlers) CreateKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
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
			return errs.New(errs.Invalid, "expiresInDays: must be an integer number of days, or null for a key that never expires")
		}
		o.ExpiresInDays = &d
	}
	p := httpx.PrincipalOf(r.Context())
	secret, k, err := h.d.Access.CreateKey(r.Context(), p.OrgID, p.UserID, o)
	if err != nil {
		return err
	}
	out := newKeyView(k, httpx.Now())
	out.Key = secret
	httpx.WriteData(w, http.StatusCreated, out)
	return nil
}

func (h *Handlers) ListKeys(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	ks, err := h.d.Orgs.ListKeys(r.Context(), httpx.OrgID(r))
	if err != nil {
		return err
	}
	now := httpx.Now()
	out := make([]keyView, 0, len(ks))
	for _, k := range ks {
		out = append(out, newKeyView(k, now))
	}
	httpx.WriteData(w, http.StatusOK, keyListView{Count: len(out), Keys: out})
	return nil
}

func (h *Handlers) RevokeKey(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id := p.ByName("id")
	pr := httpx.PrincipalOf(r.Context())
	if err := h.d.Access.RevokeKey(r.Context(), access.Actor{UserID: pr.UserID, Role: pr.Role}, httpx.OrgID(r), id); err != nil {
		return err
	}
	httpx.WriteData(w, http.StatusOK, keyRevokedView{ID: id, Revoked: true})
	return nil
}
