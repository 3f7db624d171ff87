package app

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// mux is what the route table registers into: httprouter for every route,
// plus exact paths that httprouter cannot hold beside a wildcard in the same
// position (POST /api/v1/calls/schedule beside POST /api/v1/calls/:id/result).
// Exact paths are matched first; handlers never see the difference.
type mux struct {
	router           *httprouter.Router
	exact            map[string]map[string]httprouter.Handle // path -> method -> handle
	methodNotAllowed http.Handler
}

func newMux(notFound, methodNotAllowed http.Handler) *mux {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleOPTIONS = false
	r.NotFound = notFound
	r.MethodNotAllowed = methodNotAllowed
	return &mux{router: r, exact: map[string]map[string]httprouter.Handle{}, methodNotAllowed: methodNotAllowed}
}

// add registers one route; a path without wildcards is held as an exact path.
func (m *mux) add(method, path string, h httprouter.Handle) {
	if strings.ContainsAny(path, ":*") {
		m.router.Handle(method, path, h)
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

func (m *mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if byMethod, ok := m.exact[r.URL.Path]; ok {
		if h, ok := byMethod[r.Method]; ok {
			h(w, r, nil)
			return
		}
		if h, _, _ := m.router.Lookup(r.Method, r.URL.Path); h == nil {
			m.methodNotAllowed.ServeHTTP(w, r)
			return
		}
	}
	m.router.ServeHTTP(w, r)
}
