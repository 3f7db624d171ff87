package api

import (
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
