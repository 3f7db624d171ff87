package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// Capabilities named by the route table (access owns the roles).
const (
	capAgentRead     = access.CapAgentRead
	capAgentWrite    = access.CapAgentWrite
	capCallsWrite    = access.CapCallsWrite
	capKBWrite       = access.CapKBWrite
	capListingsWrite = access.CapListingsWrite
	capAPIKeyManage  = access.CapAPIKeyManage
	capOrgManage     = access.CapOrgManage
	capMemberManage  = access.CapMemberManage
	capWebhookManage = access.CapWebhookManage
	capEventsRead    = access.CapEventsRead
	// capSettingsManage: owner and admin (organization settings, calling-hours override).
	capSettingsManage = access.CapSettingsManage

	capConversationRead  = access.CapConversationRead
	capConversationWrite = access.CapConversationWrite
)

// principal is who a request acts as (httpx keeps it in the request's
// context, where the handler packages read it).
type principal = httpx.Principal

// errNoKey and errURLKey are the two ways parseAPIKey refuses a request.
var (
	errNoKey  = errors.New("missing API key: send it in the x-api-key header or as Authorization: Bearer <key>")
	errURLKey = errors.New("API keys are not accepted in the URL: send the key in the x-api-key header or as Authorization: Bearer <key>")
)

// urlKeyParams are query names under which people put keys by mistake.
var urlKeyParams = []string{"api_key", "apiKey", "apikey", "key", "token", "access_token"}

// parseAPIKey extracts the presented key: x-api-key wins over
// Authorization: Bearer; a key in the URL is refused even when a header
// carries one, so it never ends up in proxy logs unnoticed.
func parseAPIKey(h http.Header, rawQuery string) (string, error) {
	if rawQuery != "" {
		for _, part := range strings.Split(rawQuery, "&") {
			name, _, _ := strings.Cut(part, "=")
			for _, p := range urlKeyParams {
				if strings.EqualFold(name, p) {
					return "", errURLKey
				}
			}
		}
	}
	if k := strings.TrimSpace(h.Get("X-Api-Key")); k != "" {
		return k, nil
	}
	if a := strings.TrimSpace(h.Get("Authorization")); a != "" {
		scheme, rest, ok := strings.Cut(a, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			if k := strings.TrimSpace(rest); k != "" {
				return k, nil
			}
		}
	}
	return "", errNoKey
}

// authenticate checks the key, applies the rate limit and the capability,
// and sets the rate-limit headers.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, rt route) (principal, error) {
	key, err := parseAPIKey(r.Header, r.URL.RawQuery)
	var p principal
	var limit int
	if errors.Is(err, errNoKey) && sessionRoute(rt) {
		if c, cerr := r.Cookie(sessionCookie); cerr == nil && c.Value != "" {
			if p, err = s.sessionPrincipal(r, c.Value); err != nil {
				return principal{}, err
			}
			limit = access.DefaultRateLimit
		}
	}
	if err != nil {
		return principal{}, &Error{Kind: errs.Unauthenticated, Message: err.Error()}
	}
	if p.Session != "" {
		// authenticated by the session cookie above
	} else if rt.auth == authInternal && s.cfg.InternalKey != "" && r.Header.Get("X-Api-Key") != "" &&
		subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.InternalKey)) == 1 {
		p = principal{KeyID: "internal", Internal: true, Prefix: "internal"}
		limit = access.DefaultRateLimit
	} else {
		k, err := s.lookupKey(r.Context(), key)
		if err != nil {
			return principal{}, err
		}
		p = principal{KeyID: k.KeyID, OrgID: k.OrgID, UserID: k.UserID, Role: k.Role, Prefix: k.Prefix}
		limit = k.RateLimit
	}
	if ri := httpx.RequestInfoOf(r.Context()); ri != nil {
		ri.KeyPrefix = p.Prefix
	}
	ok, remaining, reset, err := s.limiter.Allow(r.Context(), p.KeyID, limit, time.Now())
	if err != nil && dbLog.Once() {
		s.log.Warn("shared rate limit unavailable: counted in this process", "err", err)
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if !ok {
		s.countRateLimited(r)
		h.Set("Retry-After", "60")
		if strings.HasPrefix(rt.path, "/api/v2/") {
			// Documented /v2 quirk: a plain 401 in place of 429.
			return principal{}, errs.New(errs.Unauthenticated, "Unauthorized: rate limit exceeded, retry in 60 seconds")
		}
		return principal{}, &Error{Kind: errs.RateLimited, Code: codeRateLimited,
			Message: "Rate limit exceeded: " + strconv.Itoa(limit) + " requests per minute. Retry in 60 seconds."}
	}
	if rt.capability != "" && !access.Can(p.Role, rt.capability) {
		return principal{}, errs.New(errs.Forbidden, "insufficient permissions: this key's role ("+p.Role+") lacks "+rt.capability)
	}
	if c := access.V1Capability(rt.method, rt.path); rt.capability == "" && !p.Internal && strings.HasPrefix(rt.path, "/api/v1/") &&
		c != "" && !access.Can(p.Role, c) && s.access.EnforceV1Roles(r.Context(), p.OrgID, s.cfg.EnforceV1Roles) {
		return principal{}, errs.New(errs.Forbidden, "insufficient permissions: this key's role ("+p.Role+") lacks "+c+
			" (the organization enforces roles on /v1)")
	}
	return p, nil
}

var errBadKey = &Error{Kind: errs.Unauthenticated, Message: "invalid or expired API key"}

// lookupKey resolves a presented key through the cache.
func (s *Server) lookupKey(ctx context.Context, key string) (orgstore.KeyAuth, error) {
	if !access.WellFormedKey(key) {
		return orgstore.KeyAuth{}, errBadKey
	}
	k, err := s.keys.get(ctx, sha256.Sum256([]byte(key)))
	if errors.Is(err, sqldb.ErrNotFound) {
		return orgstore.KeyAuth{}, errBadKey
	}
	if err != nil {
		return orgstore.KeyAuth{}, err
	}
	if k.ExpiresAt != nil && !time.Now().Before(*k.ExpiresAt) {
		return orgstore.KeyAuth{}, errBadKey
	}
	return k, nil
}

// keyCache keeps key lookups for at most a minute and drops them all as
// soon as the database's auth epoch moves (a user removed, a key revoked, in
// any process), so revocation is immediate while most requests skip SQL.
type keyCache struct {
	db    authEpoch
	orgs  *orgstore.Orgs
	mu    sync.RWMutex
	epoch int64
	m     map[[32]byte]cachedKey
}

type cachedKey struct {
	k  orgstore.KeyAuth
	at time.Time
}

const keyCacheTTL = time.Minute

// authEpoch is the database's counter of auth changes (any process).
type authEpoch interface {
	AuthEpoch(ctx context.Context) (int64, error)
}

func newKeyCache(db authEpoch, orgs *orgstore.Orgs) *keyCache {
	return &keyCache{db: db, orgs: orgs, epoch: -1, m: map[[32]byte]cachedKey{}}
}

func (c *keyCache) get(ctx context.Context, hash [32]byte) (orgstore.KeyAuth, error) {
	epoch, err := c.db.AuthEpoch(ctx)
	if err != nil {
		return orgstore.KeyAuth{}, err
	}
	c.mu.RLock()
	e, ok := c.m[hash]
	same := c.epoch == epoch
	c.mu.RUnlock()
	if ok && same && time.Since(e.at) < keyCacheTTL {
		return e.k, nil
	}
	k, err := c.orgs.LookupKey(ctx, hash[:])
	if err != nil {
		return orgstore.KeyAuth{}, err
	}
	c.mu.Lock()
	if c.epoch != epoch || len(c.m) > 10000 {
		clear(c.m)
		c.epoch = epoch
	}
	c.m[hash] = cachedKey{k: k, at: time.Now()}
	c.mu.Unlock()
	return k, nil
}
