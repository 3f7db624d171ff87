package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	"github.com/agentd/agentd/app/agentsapi"
	"github.com/agentd/agentd/app/analysisapi"
	"github.com/agentd/agentd/app/convapi"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/errs"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/kbapi"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/app/listingsapi"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/app/web"
	"github.com/agentd/agentd/app/widgetapi"
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

// Server is the HTTP API: routes, middleware and the handlers' dependencies.
type Server struct {
	f   *features.Set // the stores and the features (app/features)
	log *slog.Logger
	now func() time.Time
	cfg Config
	mux *mux
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
	calls    callsState
	webhooks webhooksState
	conv     *convapi.Handlers     // conversations (app/convapi)
	mcp      mcpState              // /mcp (mcp_http.go)
	widget   *widgetapi.Handlers   // the chat widget's public routes (app/widgetapi)
	analysis *analysisapi.Handlers // post-call analysis (app/analysisapi)
	site     *web.Site             // the dashboard (app/web)

	agentsAPI   *agentsapi.Handlers   // app/agentsapi
	kbAPI       *kbapi.Handlers       // app/kbapi
	listingsAPI *listingsapi.Handlers // app/listingsapi
}

// newServer builds the server and its route table.
func newServer(cfg Config, f *features.Set, log *slog.Logger) *Server {
	var rates access.RateStore
	if f.Stores.Postgres() { // several processes share the database: and the limit
		rates = f.Stores.Orgs
	}
	s := &Server{
		f:           f,
		log:         log,
		now:         func() time.Time { return time.Now().UTC() },
		cfg:         cfg,
		keys:        newKeyCache(f.Stores, f.Stores.Orgs),
		access:      f.Access,
		limiter:     access.NewLimiter(time.Minute, rates),
		crossOrigin: http.NewCrossOriginProtection(),
	}
	s.mux = newMux(http.HandlerFunc(s.notFound), http.HandlerFunc(s.methodNotAllowed))
	s.site = s.newSite()
	s.conv = s.newConvAPI()
	s.widget = s.newWidgetAPI()
	s.analysis = s.newAnalysisAPI()
	s.newFeatureAPIs()
	s.routes()
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
		if ri := requestInfoFrom(r.Context()); ri != nil {
			ri.route = idx
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
			r = r.WithContext(withPrincipal(r.Context(), pr))
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
	info := &requestInfo{id: newRequestID(r.Header.Get("X-Request-Id"))}
	r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rec.Header().Set("X-Request-Id", info.id)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic", "request_id", info.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !rec.wrote {
				s.writeError(rec, r, familyOf(r.URL.Path), fmt.Errorf("panic: %v", v))
			}
		}
		if s.metrics != nil {
			s.metrics.observe(r.Method, info.route, rec.status, time.Since(start))
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)), slog.String("request_id", info.id),
			slog.String("key", info.keyPrefix))
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

// requestInfo is per-request state the outer middleware logs at the end.
type requestInfo struct {
	id        string
	keyPrefix string
	route     int // 1 + index in the route table of the matched route; 0: none
}

type requestInfoKey struct{}

func requestInfoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// requestID is the id of the request being served ("" outside one).
func requestID(ctx context.Context) string {
	if ri := requestInfoFrom(ctx); ri != nil {
		return ri.id
	}
	return ""
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
