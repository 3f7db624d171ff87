package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/errs"
)

const keysPerPage = 25

// keyRow is one API key as the list shows it.
type keyRow struct {
	Key    access.APIKey
	Status string
}

type keysData struct {
	Keys    []keyRow
	Pager   pager
	Secret  string // the key just created, shown once
	Created string // its name
}

func (s *Site) keysPage(w http.ResponseWriter, r *http.Request, u user) error {
	return s.renderKeys(w, r, u, http.StatusOK, keysData{}, "")
}

// renderKeys lists the organization's keys, newest first, one page at a
// time (the list is small and cached by storage).
func (s *Site) renderKeys(w http.ResponseWriter, r *http.Request, u user, status int, d keysData, msg string) error {
	ks, err := s.cfg.Access.Keys(r.Context(), u.OrgID)
	if err != nil {
		return err
	}
	offset := pageParams(r)
	if r.Method != http.MethodGet {
		offset = 0
	}
	now := s.cfg.Now()
	end := min(offset+keysPerPage, len(ks))
	for _, k := range ks[min(offset, len(ks)):end] {
		d.Keys = append(d.Keys, keyRow{Key: k, Status: access.KeyStatus(k, now)})
	}
	d.Pager = newPager(r, offset, keysPerPage, len(d.Keys), len(ks), false)
	s.render(w, r, status, "keys", page{Title: "API keys", Nav: "keys", User: u, Error: msg, Data: d})
	return nil
}

// createKey makes a key for the signed-in user and shows its secret on
// this answer only: it is never stored and never shown again.
func (s *Site) createKey(w http.ResponseWriter, r *http.Request, u user) error {
	o := access.KeyOptions{Name: strings.TrimSpace(r.PostFormValue("name"))}
	switch v := r.PostFormValue("expires"); v {
	case "never":
		o.Never = true
	case "":
	default:
		d, err := strconv.Atoi(v)
		if err != nil {
			return s.renderKeys(w, r, u, http.StatusBadRequest, keysData{}, "expires: a number of days, or never")
		}
		o.ExpiresInDays = &d
	}
	if v := strings.TrimSpace(r.PostFormValue("rateLimit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s.renderKeys(w, r, u, http.StatusBadRequest, keysData{}, "rate limit: a whole number of requests per minute")
		}
		o.RateLimit = n
	}
	secret, k, err := s.cfg.Access.CreateKey(r.Context(), u.OrgID, u.UserID, o)
	if errs.KindOf(err) == errs.Invalid {
		return s.renderKeys(w, r, u, http.StatusBadRequest, keysData{}, err.(*errs.Error).Message)
	}
	if err != nil {
		return err
	}
	return s.renderKeys(w, r, u, http.StatusCreated, keysData{Secret: secret, Created: k.Name}, "")
}

func (s *Site) revokeKey(w http.ResponseWriter, r *http.Request, u user) error {
	if err := s.cfg.Access.RevokeKey(r.Context(), access.Actor{UserID: u.UserID, Role: u.Role}, u.OrgID, r.PathValue("id")); err != nil {
		return err
	}
	redirect(w, r, "/keys", "Key revoked")
	return nil
}
