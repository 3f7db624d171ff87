package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// mux is what the route table registers into. httprouter cannot hold a
// static segment beside a wildcard in the same position (POST
// /api/v1/calls/schedule beside POST /api/v1/calls/:id/result, GET
// /api/v1/calls/batches/:id beside GET /api/v1/calls/:id), so: paths
// without wildcards are held as exact paths, matched first; the others go
// to one httprouter per static prefix (the path up to its first wildcard),
// and a request goes to the router of the longest prefix that has its path.
// Handlers never see the difference.
type mux struct {
	routers          map[string]*httprouter.Router           // static prefix -> router
	prefixes         []string                                // longest first
	exact            map[string]map[string]httprouter.Handle // path -> method -> handle
	notFound         http.Handler
	methodNotAllowed http.Handler
}

func newMux(notFound, methodNotAllowed http.Handler) *mux {
	return &mux{routers: map[string]*httprouter.Router{}, exact: map[string]map[string]httprouter.Handle{},
		notFound: notFound, methodNotAllowed: methodNotAllowed}
}

func (m *mux) newRouter() *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleOPTIONS = false
	r.NotFound = m.notFound
	r.MethodNotAllowed = m.methodNotAllowed
	return r
}

// add registers one route; a path without wildcards is held as an exact path.
func (m *mux) add(method, path string, h httprouter.Handle) {
	if i := strings.IndexAny(path, ":*"); i >= 0 {
		prefix := path[:i]
		r := m.routers[prefix]
		if r == nil {
			r = m.newRouter()
			m.routers[prefix] = r
			m.prefixes = append(m.prefixes, prefix)
			slices.SortStableFunc(m.prefixes, func(a, b string) int { return len(b) - len(a) })
		}
		r.Handle(method, path, h)
		return
	}
	if m.exact[path] == nil {
		m.exact[path] = map[string]httprouter.Handle{}
	}
	if _, dup := m.exact[path][method]; dup {
		panic("app: route registered twice: " + method + " " + path)
	}
	m.exact[path][method] = h
}

var muxMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// router is the router holding path under any method, nil when none does.
func (m *mux) router(path string) *httprouter.Router {
	for _, p := range m.prefixes {
		if !strings.HasPrefix(path, p) {
			continue
		}
		r := m.routers[p]
		for _, meth := range muxMethods {
			if h, _, _ := r.Lookup(meth, path); h != nil {
				return r
			}
		}
	}
	return nil
}

// has reports whether a route answers method on path.
func (m *mux) has(method, path string) bool {
	if _, ok := m.exact[path][method]; ok {
		return true
	}
	for _, p := range m.prefixes {
		if strings.HasPrefix(path, p) {
			if h, _, _ := m.routers[p].Lookup(method, path); h != nil {
				return true
			}
		}
	}
	return false
}

func (m *mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// HEAD is GET without the body (RFC 9110 9.3.2), on every GET route.
	if r.Method == http.MethodHead && m.has(http.MethodGet, r.URL.Path) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		g := r.WithContext(ctx)
		g.Method = http.MethodGet
		w, r = &headWriter{ResponseWriter: w, cancel: cancel}, g
	}
	if byMethod, ok := m.exact[r.URL.Path]; ok {
		if h, ok := byMethod[r.Method]; ok {
			h(w, r, nil)
			return
		}
		if rt := m.router(r.URL.Path); rt == nil {
			m.methodNotAllowed.ServeHTTP(w, r)
			return
		}
	}
	if rt := m.router(r.URL.Path); rt != nil {
		rt.ServeHTTP(w, r)
		return
	}
	m.notFound.ServeHTTP(w, r)
}

// headWriter answers a HEAD served by a GET handler. net/http drops the
// body of a HEAD (and counts it for Content-Length); the first flush ends
// the handler, so a stream (server-sent events) sends its headers and stops
// instead of running on with nothing to send.
type headWriter struct {
	http.ResponseWriter
	cancel context.CancelFunc
}

func (h *headWriter) FlushError() error {
	err := http.NewResponseController(h.ResponseWriter).Flush()
	h.cancel()
	return err
}

// Unwrap lets http.ResponseController reach the real writer for deadlines.
func (h *headWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }
