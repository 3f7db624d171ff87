package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Every response the app tests receive through testEnv's client is checked
// against the OpenAPI document: its status must be documented for the route
// and its body must match the schema. Objects are closed (a field the schema
// does not name fails) so the document cannot drift from the typed responses.
// TestMain then requires one checked success and one checked error per route.

// schemaChecker is the test client's transport.
type schemaChecker struct {
	srv  *Server
	next http.RoundTripper
}

// schemaState is shared by every test env of the package run.
var schemaState = struct {
	sync.Mutex
	once     sync.Once
	compiler *jsonschema.Compiler
	doc      map[string]any
	err      error
	cache    map[string]*jsonschema.Schema
	seen     map[string]int // "GET /api/v1/calls/{id}" -> 1 success, 2 error (bits)
	routes   map[string]bool
	failures []string
}{cache: map[string]*jsonschema.Schema{}, seen: map[string]int{}, routes: map[string]bool{}}

const docURL = "mem://openapi.json"

func (c schemaChecker) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || req.Method == http.MethodOptions {
		return resp, err
	}
	ctype := resp.Header.Get("Content-Type")
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// A WebSocket: its status is checked, its messages are the caller's.
		c.check(req.Method, req.URL.Path, resp.StatusCode, "", nil)
		return resp, nil
	}
	if strings.HasPrefix(ctype, "text/event-stream") {
		// A stream never ends by itself: its status and content type are
		// checked, its body is left to the caller.
		c.check(req.Method, req.URL.Path, resp.StatusCode, ctype, nil)
		return resp, nil
	}
	b, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if rerr != nil {
		return resp, nil
	}
	c.check(req.Method, req.URL.Path, resp.StatusCode, ctype, b)
	return resp, nil
}

// check validates one response and records what was seen.
func (c schemaChecker) check(method, path string, status int, ctype string, body []byte) {
	st := &schemaState
	st.Lock()
	defer st.Unlock()
	st.once.Do(func() { st.err = loadSchemaDoc(c.srv) })
	if st.err != nil {
		st.failures = append(st.failures, "openapi document: "+st.err.Error())
		return
	}
	for _, rt := range c.srv.table {
		st.routes[rt.method+" "+openapiPath(rt.path)] = true
	}
	rt, ok := matchRoute(c.srv.table, method, path)
	if !ok || status == http.StatusMethodNotAllowed || status == 499 {
		return // no route: the router's own 404/405, documented once for all
	}
	op := rt.method + " " + openapiPath(rt.path)
	ptr, ok := responseSchemaPointer(st.doc, openapiPath(rt.path), strings.ToLower(rt.method), status)
	if !ok {
		st.failures = append(st.failures, fmt.Sprintf("%s answered %d, which the document does not list", op, status))
		return
	}
	if strings.HasPrefix(ctype, "text/event-stream") {
		if dig(st.doc, "paths", openapiPath(rt.path), strings.ToLower(rt.method), "responses", strconv.Itoa(status), "content", "text/event-stream") == nil {
			st.failures = append(st.failures, fmt.Sprintf("%s %d: an event stream the document does not list", op, status))
			return
		}
	} else if ptr != "" && status != http.StatusSwitchingProtocols {
		if !strings.HasPrefix(ctype, "application/json") {
			st.failures = append(st.failures, fmt.Sprintf("%s %d: content type %q, want JSON", op, status, ctype))
			return
		}
		sch, err := compiledSchema(ptr)
		if err != nil {
			st.failures = append(st.failures, fmt.Sprintf("%s %d: schema: %v", op, status, err))
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			st.failures = append(st.failures, fmt.Sprintf("%s %d: body is not JSON: %.200q", op, status, body))
			return
		}
		if err := sch.Validate(v); err != nil {
			st.failures = append(st.failures, fmt.Sprintf("%s %d: body %.300s does not match the schema: %v", op, status, body, err))
			return
		}
	}
	if status < 400 {
		st.seen[op] |= 1
	} else {
		st.seen[op] |= 2
	}
}

// matchRoute finds the route table entry for a request path.
func matchRoute(table []route, method, path string) (route, bool) {
	for _, rt := range table {
		if rt.method == method && rt.path == path {
			return rt, true
		}
	}
	for _, rt := range table {
		if rt.method == method && routeRE(rt.path).MatchString(path) {
			return rt, true
		}
	}
	return route{}, false
}

var routeREs sync.Map

func routeRE(p string) *regexp.Regexp {
	if re, ok := routeREs.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	pat := regexp.MustCompile(`:[A-Za-z0-9_]+`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)
	pat = regexp.MustCompile(`\\\*[A-Za-z0-9_]+`).ReplaceAllString(pat, `.*`)
	re := regexp.MustCompile("^" + pat + "$")
	routeREs.Store(p, re)
	return re
}

// responseSchemaPointer is the JSON pointer of the schema of a documented
// response ("" when the response has no body), ok false when undocumented.
func responseSchemaPointer(doc map[string]any, path, method string, status int) (string, bool) {
	ptr := "#/paths/" + escapePointer(path) + "/" + method + "/responses/"
	resps, _ := dig(doc, "paths", path, method, "responses").(map[string]any)
	key := strconv.Itoa(status)
	r, ok := resps[key]
	if !ok {
		if r, ok = resps[key[:1]+"XX"]; ok {
			key = key[:1] + "XX"
		} else if r, ok = resps["default"]; ok {
			key = "default"
		} else {
			return "", false
		}
	}
	ptr += key
	rm, _ := r.(map[string]any)
	if ref, ok := rm["$ref"].(string); ok {
		ptr = ref
		name := strings.TrimPrefix(ref, "#/components/responses/")
		rm, _ = dig(doc, "components", "responses", name).(map[string]any)
	}
	if dig(rm, "content", "application/json", "schema") == nil {
		return "", true
	}
	return ptr + "/content/application~1json/schema", true
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// loadSchemaDoc builds the served document, closes its object schemas and
// registers it with a compiler.
func loadSchemaDoc(srv *Server) error {
	doc, err := srv.openAPIDocument()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	m := v.(map[string]any)
	closeObjects(m, allOfTargets(m))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, m); err != nil {
		return err
	}
	schemaState.compiler, schemaState.doc = c, m
	return nil
}

func compiledSchema(ptr string) (*jsonschema.Schema, error) {
	if s, ok := schemaState.cache[ptr]; ok {
		return s, nil
	}
	s, err := schemaState.compiler.Compile(docURL + ptr)
	if err != nil {
		return nil, err
	}
	schemaState.cache[ptr] = s
	return s, nil
}

// allOfTargets are the component schemas used as a branch of an allOf: they
// stay open, the allOf that combines them is closed instead.
func allOfTargets(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if all, ok := x["allOf"].([]any); ok {
				for _, b := range all {
					if ref, ok := dig(b, "$ref").(string); ok {
						out[ref] = true
					}
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

// closeObjects sets unevaluatedProperties: false on every object schema that
// names its properties and says nothing about others.
func closeObjects(doc map[string]any, open map[string]bool) {
	var walk func(v any, ref string, inAllOf bool)
	walk = func(v any, ref string, inAllOf bool) {
		switch x := v.(type) {
		case map[string]any:
			_, props := x["properties"]
			_, all := x["allOf"]
			_, ap := x["additionalProperties"]
			_, up := x["unevaluatedProperties"]
			if (props || all) && !ap && !up && !open[ref] && !inAllOf {
				x["unevaluatedProperties"] = false
			}
			for k, c := range x {
				if k == "allOf" {
					for _, b := range c.([]any) {
						walk(b, "", true)
					}
					continue
				}
				walk(c, "", false)
			}
		case []any:
			for _, c := range x {
				walk(c, "", false)
			}
		}
	}
	if schemas, ok := dig(doc, "components", "schemas").(map[string]any); ok {
		for name, s := range schemas {
			walk(s, "#/components/schemas/"+name, false)
		}
	}
	for k, v := range doc {
		if k != "components" {
			walk(v, "", false)
		}
	}
	if resps, ok := dig(doc, "components", "responses").(map[string]any); ok {
		walk(resps, "", false)
	}
}

// schemaReport is what TestMain prints and fails on: mismatches, and routes
// with no checked success or error (only when the whole package ran).
func schemaReport(full bool) []string {
	st := &schemaState
	st.Lock()
	defer st.Unlock()
	out := slices.Clone(st.failures)
	if full {
		for op := range st.routes {
			if st.seen[op]&1 == 0 {
				out = append(out, op+": no success response checked against its schema")
			}
			if st.seen[op]&2 == 0 && documentsError(st.doc, op) {
				out = append(out, op+": no error response checked against its schema")
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// documentsError reports whether the document lists an error response for
// op ("GET /healthz"); the OpenAPI document itself has none to test.
func documentsError(doc map[string]any, op string) bool {
	method, path, _ := strings.Cut(op, " ")
	resps, _ := dig(doc, "paths", path, strings.ToLower(method), "responses").(map[string]any)
	for code := range resps {
		if code[0] == '4' || code[0] == '5' {
			return true
		}
	}
	return false
}
