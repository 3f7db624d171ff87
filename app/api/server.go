package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	talkapi "github.com/agentd/agentd/app/api/talk"
	"github.com/agentd/agentd/app/webcall"
	"log/slog"
	"net/http"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
	agentsapi "github.com/agentd/agentd/app/api/agents"
	analysisapi "github.com/agentd/agentd/app/api/analysis"
	callsapi "github.com/agentd/agentd/app/api/calls"
	campaignsapi "github.com/agentd/agentd/app/api/campaigns"
	convapi "github.com/agentd/agentd/app/api/conversations"
	"github.com/agentd/agentd/app/api/httpx"
	kbapi "github.com/agentd/agentd/app/api/kb"
	keysapi "github.com/agentd/agentd/app/api/keys"
	listingsapi "github.com/agentd/agentd/app/api/listings"
	mcpapi "github.com/agentd/agentd/app/api/mcp"
	sessionsapi "github.com/agentd/agentd/app/api/sessions"
	webhooksapi "github.com/agentd/agentd/app/api/webhooks"
	widgetapi "github.com/agentd/agentd/app/api/widget"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	agentdmcp "github.com/agentd/agentd/app/mcp"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/app/web"
	"github.com/agentd/agentd/app/widget"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/metrics"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/orgstore"
)

// authMode says how a route authenticates.
type authMode int

const (
	authKey      authMode = iota // a valid API key (v1); with capability set, the role must hold it (v2)
	authNone                     // public: health, OpenAPI, signed webhooks
	authInternal                 // an API key, or the internal service key in x-api-key
)

// route is one entry of the route table: the router, the middleware and the
// OpenAPI document are all built from it.
type route struct {
	method     string
	path       string // httprouter syntax: /api/v1/calls/:id
	family     Family
	auth       authMode
	capability string // required on /v2 routes
	bodyLimit  int64  // bytes; 0 means 1 MiB
	summary    string
	operation  string // OpenAPI operationId: the handler's name, unique and stable
}

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error

// Config is the HTTP API's settings (agentd serve fills it from its own).
type Config struct {
	Version     string
	InternalKey string // service-to-service key for POST /api/v1/calls/schedule
	PublicURL   string // how browsers reach the server (setup link, Secure cookies when https)
	// ReadTimeout bounds reading a request (default 30 s; see bodyDeadline).
	ReadTimeout time.Duration
	// EnforceV1Roles applies the key's role capabilities on /v1 for every
	// organization (--v1-enforce-roles).
	EnforceV1Roles bool
	// Webhooks tunes the event stream (poll, keep-alive, re-check).
	Webhooks events.Config
	// Metrics, when set, counts every request by route; nil is off.
	Metrics *metrics.Registry
	Log     *slog.Logger
}

// Deps are the opened features (app/features) the handlers call and the
// few stores the HTTP layer reads itself: the auth epoch and keys of its
// middleware, the readers the conversation API lists with.
type Deps struct {
	Dashboard     *dashboard.Service // the dashboard's aggregates (app/web)
	Access        *access.Service
	Agents        *agents.Service
	DNC           *dnc.Service
	Settings      *settings.Service
	Calls         *calls.Service
	KB            *kb.Service
	Listings      *listings.Service
	Events        *events.Service
	Deliveries    *events.Worker // nil when deliveries are off
	Conversations *conversations.Service
	Widget        *widget.Service
	Analysis      *analysis.Service
	AgentTests    agenttest.Runner
	Recordings    *recordings.Service
	WebCalls      *webcall.Service // browser voice sessions
	Stores        Stores
}

// Stores are the stores the HTTP layer reads directly.
type Stores struct {
	Epoch  authEpoch
	Orgs   *orgstore.Orgs
	Calls  *callstore.Calls
	Agents *agentstore.Agents
	// Shared says several processes share the database (PostgreSQL): the
	// rate limit is kept there.
	Shared bool
}

// Server is the HTTP API: routes, middleware and the handlers' dependencies.
type Server struct {
	stores Stores
	log    *slog.Logger
	now    func() time.Time
	cfg    Config
	mux    *mux
	// crossOrigin refuses cross-site state-changing requests that carry
	// the session cookie (and cross-site sign-ins).
	crossOrigin *http.CrossOriginProtection
	table       []route
	keys        *keyCache
	limiter     *access.Limiter
	access      *access.Service                 // sign-in, sessions, keys, members (app/features)
	metrics     *httpMetrics                    // nil unless --metrics-addr (app/metrics.go)
	openapiDoc  func() (json.RawMessage, error) // GET /api/openapi.json, built on first use

	// Feature state, set up by each feature's wire function.
	agents   *agents.Service
	dnc      *dnc.Service
	settings *settings.Service
	kb       *kb.Service
	listings *listings.Service
	// stopStreams ends the open event streams (Shutdown).
	stopStreams context.CancelFunc
	// guard counts the open streams per key (events and answers) and
	// re-checks the event streams' credentials.
	guard    *events.StreamGuard
	conv     *convapi.Handlers     // conversations (app/api/conversations)
	mcp      *mcpapi.Handlers      // /mcp (app/api/mcp over app/mcp)
	widget   *widgetapi.Handlers   // the chat widget's public routes (app/api/widget)
	analysis *analysisapi.Handlers // post-call analysis (app/api/analysis)
	talk     *talkapi.Handlers     // browser voice sessions (app/api/talk)
	site     *web.Site             // the dashboard (app/web)

	callsAPI     *callsapi.Handlers     // calls, call results, LiveKit webhooks (app/api/calls)
	campaignsAPI *campaignsapi.Handlers // batches, do-not-call, settings (app/api/campaigns)
	keysAPI      *keysapi.Handlers      // API keys (app/api/keys)
	sessionsAPI  *sessionsapi.Handlers  // sign-in, sessions, members (app/api/sessions)
	webhooksAPI  *webhooksapi.Handlers  // webhooks and the event log (app/api/webhooks)
	agentsAPI    *agentsapi.Handlers    // app/api/agents
	kbAPI        *kbapi.Handlers        // app/api/kb
	listingsAPI  *listingsapi.Handlers  // app/api/listings
}

// New builds the server, complete, from the opened features: its handlers,
// the dashboard and the route table.
func New(cfg Config, d Deps) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	var rates access.RateStore
	if d.Stores.Shared { // several processes share the database: and the limit
		rates = d.Stores.Orgs
	}
	streams, stop := context.WithCancel(context.Background())
	s := &Server{
		stores:      d.Stores,
		log:         cfg.Log,
		now:         func() time.Time { return time.Now().UTC() },
		cfg:         cfg,
		keys:        newKeyCache(d.Stores.Epoch, d.Stores.Orgs),
		access:      d.Access,
		limiter:     access.NewLimiter(time.Minute, rates),
		crossOrigin: http.NewCrossOriginProtection(),
		agents:      d.Agents, dnc: d.DNC, settings: d.Settings, kb: d.KB, listings: d.Listings,
		stopStreams: stop,
		guard:       events.NewStreamGuard(cfg.Webhooks.Recheck),
	}
	s.webhooksAPI = webhooksapi.New(webhooksapi.Deps{Events: d.Events, Deliveries: d.Deliveries, Streams: streams,
		Stream: events.StreamConfig{Poll: cfg.Webhooks.Poll, KeepAlive: cfg.Webhooks.KeepAlive},
		Guard:  s.guard, Recheck: s, Log: cfg.Log})
	s.keysAPI = keysapi.New(keysapi.Deps{Access: d.Access, Orgs: d.Stores.Orgs})
	s.sessionsAPI = sessionsapi.New(sessionsapi.Deps{Access: d.Access, Orgs: d.Stores.Orgs, CrossOrigin: s.crossOrigin,
		SecureCookie: strings.HasPrefix(cfg.PublicURL, "https://")})
	s.campaignsAPI = campaignsapi.New(campaignsapi.Deps{Calls: d.Calls, DNC: d.DNC, Settings: d.Settings})
	s.mux = newMux(http.HandlerFunc(s.notFound), http.HandlerFunc(s.methodNotAllowed))
	s.site = s.newSite(d)
	s.analysis = s.newAnalysisAPI(d.Analysis, d.AgentTests) // before the handlers that read analyses through it
	s.callsAPI = callsapi.New(callsapi.Deps{Calls: d.Calls, Analysis: s.analysis, Recordings: d.Recordings})
	s.conv = s.newConvAPI(d.Conversations)
	s.mcp = mcpapi.New(agentdmcp.New(agentdmcp.Deps{Agents: d.Agents, Calls: d.Calls, KB: d.KB, Conversations: d.Conversations,
		Analysis: d.Analysis, Log: cfg.Log, Version: cfg.Version}, agentdmcp.Options{}))
	s.widget = s.newWidgetAPI(d.Widget)
	s.talk = talkapi.New(talkapi.Deps{WebCalls: d.WebCalls, Log: cfg.Log, Stop: streams})
	s.newFeatureAPIs()
	s.routes()
	if cfg.Metrics != nil {
		s.metrics = newHTTPMetrics(cfg.Metrics, s)
	}
	s.openapiDoc = sync.OnceValues(func() (json.RawMessage, error) {
		doc, err := s.openAPIDocument()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as writeJSON, which serves it
		err = enc.Encode(doc)
		return buf.Bytes(), err
	})
	return s
}

// handle registers a route with the middleware chain in front of h: body
// limit, authentication, rate limit, capability.
func (s *Server) handle(rt route, h handlerFunc) {
	if rt.bodyLimit == 0 {
		rt.bodyLimit = 1 << 20
	}
	if rt.operation == "" {
		rt.operation = handlerName(h)
	}
	for _, other := range s.table {
		if other.operation == rt.operation {
			panic("app: two routes share the handler " + rt.operation + ": give one an operation name")
		}
	}
	s.table = append(s.table, rt)
	idx := len(s.table) // 1 + the route's index, for the metrics label
	wrapped := func(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
		if ri := httpx.RequestInfoOf(r.Context()); ri != nil {
			ri.Route = idx
		}
		if r.ContentLength > rt.bodyLimit {
			s.writeError(w, r, rt.family, errs.New(errs.TooLarge,
				fmt.Sprintf("request body too large (max %d bytes)", rt.bodyLimit)))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, rt.bodyLimit)
		if rt.bodyLimit > 1<<20 {
			_ = http.NewResponseController(w).SetReadDeadline(bodyDeadline(s.cfg, rt.bodyLimit))
		}
		if rt.auth != authNone {
			pr, err := s.authenticate(w, r, rt)
			if err != nil {
				s.writeError(w, r, rt.family, err)
				return
			}
			r = r.WithContext(httpx.WithPrincipal(r.Context(), pr))
		}
		if err := h(w, r, p); err != nil {
			s.writeError(w, r, rt.family, err)
		}
	}
	s.mux.add(rt.method, rt.path, wrapped)
}

// ServeHTTP runs the outer middleware (request id, recover, logging, CORS
// preflight) and hands the request to the route table's mux.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := &httpx.RequestInfo{ID: newRequestID(r.Header.Get("X-Request-Id"))}
	r = r.WithContext(httpx.WithRequestInfo(r.Context(), info))
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rec.Header().Set("X-Request-Id", info.ID)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic", "request_id", info.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !rec.wrote {
				s.writeError(rec, r, familyOf(r.URL.Path), fmt.Errorf("panic: %v", v))
			}
		}
		if s.metrics != nil {
			s.metrics.observe(r.Method, info.Route, rec.status, time.Since(start))
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)), slog.String("request_id", info.ID),
			slog.String("key", info.KeyPrefix))
	}()
	if r.Method == http.MethodOptions && strings.HasPrefix(r.URL.Path, "/api/public/") {
		s.widget.Preflight(rec, r) // the widget's listed origins only
		return
	}
	if r.Method == http.MethodOptions {
		preflight(rec)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// Shutdown ends the open event streams, so that a graceful stop of the
// HTTP server does not wait for them, and the browser voice sessions.
func (s *Server) Shutdown() {
	s.stopStreams()
	// Voice sessions are hijacked connections the HTTP server does not
	// wait for: they end now, their call records closed while the
	// database is still open.
	if !s.talk.Wait(10 * time.Second) {
		s.log.Warn("browser voice sessions still running at shutdown")
	}
}

// httpServer is the net/http server for s with its timeouts (headers, the
// read bound of cfg.ReadTimeout, idle connections).
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       readTimeout(s.cfg),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// preflight answers a CORS preflight. Actual responses carry no CORS header:
// keys are for server-to-server use.
func preflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Api-Key, X-Request-Id")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, familyOf(r.URL.Path), notFound("no such endpoint: "+r.Method+" "+r.URL.Path))
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, familyOf(r.URL.Path), errs.New(errs.MethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path))
}

// familyOf picks the error shape for a path no route matched.
func familyOf(path string) Family {
	switch {
	case strings.HasPrefix(path, "/api/v1/kb/"):
		return FamilyKB
	case strings.HasPrefix(path, "/api/v1/listings/"):
		return FamilyListings
	case strings.HasPrefix(path, "/api/v1/agents"):
		return FamilyAgents
	case strings.HasPrefix(path, "/api/v1/calls"), strings.HasPrefix(path, "/api/v1/dnc"):
		return FamilyCalls
	case strings.HasPrefix(path, "/api/v1/openai/"):
		return FamilyOpenAI
	}
	return FamilyV2
}

// newRequestID keeps a sane incoming X-Request-Id (for tracing across
// proxies) and makes a new one otherwise.
func newRequestID(in string) string {
	if n := len(in); n > 0 && n <= 64 && strings.Trim(in, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == "" {
		return in
	}
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusRecorder remembers the status for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.wrote = true
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// handlerName is a handler method's name ("listAgents"), the route's
// OpenAPI operationId unless the route names one.
func handlerName(h handlerFunc) string {
	name := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm")
	name = name[strings.LastIndexByte(name, '.')+1:]
	// A handler of a sub-package (kbapi.Handlers.CreateCollection) is
	// exported; its operationId starts lower-case as app's own do.
	return strings.ToLower(name[:1]) + name[1:]
}
