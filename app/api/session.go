package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/agentd/agentd/internal/errs"
)

// sessionCookie holds the dashboard session token (never stored: the
// database keeps its SHA-256).
const sessionCookie = "agentd_session"

// csrfHeader carries the session's CSRF token on state-changing requests.
const csrfHeader = "X-CSRF-Token"

// sessionRoute reports whether a route accepts the dashboard session: every
// /v2 route does, /v1 never does (DECISIONS.md).
func sessionRoute(rt route) bool { return strings.HasPrefix(rt.path, "/api/v2/") }

// safeMethod reports whether a method changes nothing.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

var errCSRF = errs.New(errs.Forbidden, "cross-site request refused: a signed-in request that changes something needs the X-CSRF-Token header from sign-in or GET /api/v2/auth/me")

// sessionPrincipal authenticates a session token; a state-changing request
// must also pass the cross-origin check and carry the session's CSRF token.
func (s *Server) sessionPrincipal(r *http.Request, token string) (principal, error) {
	sess, err := s.access.Authenticate(r.Context(), token, s.now())
	if err != nil {
		return principal{}, err
	}
	if !safeMethod(r.Method) {
		if err := s.crossOrigin.Check(r); err != nil {
			return principal{}, errs.Wrap(errs.Forbidden, "cross-origin request refused", err)
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(csrfHeader)), []byte(sess.CSRFToken)) != 1 {
			return principal{}, errCSRF
		}
	}
	return principal{KeyID: "session:" + sess.UserID, OrgID: sess.OrgID, UserID: sess.UserID, Role: sess.Role,
		Prefix: "session", Session: token, CSRF: sess.CSRFToken}, nil
}
