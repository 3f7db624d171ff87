package api

import (
	"fmt"
	"net/http"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
)

// StillAllowed re-checks the credential of a long-lived request (an event
// stream): the same key or session, not revoked, expired or signed out,
// with a role that holds the capability. The key cache and the auth epoch
// make it one small query. A database error keeps the stream (it is
// checked again).
func (s *Server) StillAllowed(r *http.Request, capability string) bool {
	p := httpx.PrincipalOf(r.Context())
	var role string
	if p.Session != "" {
		np, err := s.sessionPrincipal(r, p.Session)
		if err != nil {
			return errs.KindOf(err) == errs.Internal
		}
		role = np.Role
	} else {
		key, err := parseAPIKey(r.Header, r.URL.RawQuery)
		if err != nil {
			return false
		}
		k, err := s.lookupKey(r.Context(), key)
		if err != nil {
			return err != errBadKey
		}
		role = k.Role
	}
	return access.Can(role, capability)
}

// MaxAnswerStreamsPerKey bounds the streamed answers (conversation API and
// OpenAI-compatible endpoint) one key or one session holds open in a
// process: each holds an upstream model connection (200 were accepted).
// A voice worker fleet beyond it uses one key per worker.
const MaxAnswerStreamsPerKey = 32

// StreamSlot takes one of the caller's answer-stream slots (counted in the
// event streams' guard, under ids of their own), or refuses with a 429.
func (s *Server) StreamSlot(r *http.Request) (release func(), err error) {
	p := httpx.PrincipalOf(r.Context())
	id := "answer:key:" + p.KeyID
	if p.Session != "" {
		id = "answer:user:" + p.UserID
	}
	release, ok := s.guard.Take(id, MaxAnswerStreamsPerKey)
	if !ok {
		return nil, errs.New(errs.RateLimited, fmt.Sprintf("too many streamed answers open for this key (at most %d): "+
			"wait for one to end", MaxAnswerStreamsPerKey))
	}
	return release, nil
}
