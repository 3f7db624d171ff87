package test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// apiRoute is one documented operation of /api/openapi.json.
type apiRoute struct {
	method, path string // path with {params}
	props        map[string]string
	public       bool
}

// routesFromOpenAPI lists every operation of the running server with the
// top-level JSON properties of its request body and their types.
func routesFromOpenAPI(t testing.TB, s *server) []apiRoute {
	t.Helper()
	r := s.must("GET", "/api/openapi.json", "", nil)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	var out []apiRoute
	for p, ops := range doc.Paths {
		for m, raw := range ops {
			var op struct {
				Security    *[]any `json:"security"`
				RequestBody struct {
					Content map[string]struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			json.Unmarshal(raw, &op)
			rt := apiRoute{method: strings.ToUpper(m), path: p, props: map[string]string{}, public: op.Security != nil && len(*op.Security) == 0}
			if c, ok := op.RequestBody.Content["application/json"]; ok {
				collectProps(c.Schema, doc.Components.Schemas, rt.props, 0)
			}
			out = append(out, rt)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

// collectProps gathers property name -> JSON type of a schema, following
// $ref and allOf one level deep.
func collectProps(raw json.RawMessage, schemas map[string]json.RawMessage, into map[string]string, depth int) {
	if depth > 4 || len(raw) == 0 {
		return
	}
	var sc struct {
		Ref        string                     `json:"$ref"`
		AllOf      []json.RawMessage          `json:"allOf"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(raw, &sc)
	if sc.Ref != "" {
		collectProps(schemas[strings.TrimPrefix(sc.Ref, "#/components/schemas/")], schemas, into, depth+1)
	}
	for _, a := range sc.AllOf {
		collectProps(a, schemas, into, depth+1)
	}
	for name, p := range sc.Properties {
		var ps struct {
			Type any    `json:"type"`
			Ref  string `json:"$ref"`
		}
		json.Unmarshal(p, &ps)
		typ := fmt.Sprint(ps.Type)
		if ps.Ref != "" {
			typ = "object"
		}
		into[name] = typ
	}
}

// wrongValue is a JSON value of another type than typ.
func wrongValue(typ string) any {
	switch {
	case strings.Contains(typ, "string"):
		return 12345
	case strings.Contains(typ, "integer"), strings.Contains(typ, "number"):
		return "not-a-number"
	case strings.Contains(typ, "boolean"):
		return "yes"
	case strings.Contains(typ, "array"):
		return map[string]any{"not": "an array"}
	}
	return []any{"not", "an", "object"}
}

// hostileBodies are bodies no endpoint may accept.
func hostileBodies() map[string][]byte {
	deep := strings.Repeat(`{"a":[`, 20000) + strings.Repeat(`]}`, 20000)
	return map[string][]byte{
		"malformed":       []byte(`{"name": "x",`),
		"not an object":   []byte(`[1,2,3]`),
		"a string":        []byte(`"hello"`),
		"null":            []byte(`null`),
		"empty":           []byte(``),
		"trailing data":   []byte(`{} {}`),
		"invalid utf8":    []byte("{\"name\": \"\xff\xfe\xfd\"}"),
		"deeply nested":   []byte(deep),
		"10 MB string":    []byte(`{"name": "` + strings.Repeat("x", 10<<20) + `"}`),
		"nul bytes":       []byte(`{"name": "a\u0000b", "externalId": "\u0000"}`),
		"duplicate keys":  []byte(`{"name": 1, "name": {"x": 1}}`),
		"raw nul":         []byte("{\"name\": \"a\x00b\"}"),
		"unicode escapes": []byte(`{"name": "\ud800"}`),
	}
}

// injections go into every string field; they may be accepted as text but
// must never break a query.
var injections = []string{`"`, `'`, `*`, `NEAR(a b)`, `'; DROP TABLE agents; --`, `") OR 1=1 --`, `a AND OR NOT`, `%_\`, `{"$gt": ""}`, "\u200b\u2060"}

// hostileIDs go into path parameters.
var hostileIDs = []string{"../../etc/passwd", "..%2F..%2Fetc", "' OR '1'='1", strings.Repeat("9", 5000), "%00", "ｉｄ", "*"}

// familyShapeOK checks that an error body has the shape of its family.
func familyShapeOK(path string, body []byte) bool {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	e, _ := m["error"].(map[string]any)
	if e == nil || e["message"] == nil {
		return false
	}
	if e["code"] == "RATE_LIMITED" {
		return true
	}
	// Post-call analysis and agent tests (issue 24) answer in the v2 family
	// under v1 paths, as conversations do: {error: {message, status}}; a
	// path the router does not match answers in the prefix's family.
	for _, suffix := range []string{"/analysis-plan", "/tests", "/analysis", "/analyze"} {
		if strings.HasSuffix(path, suffix) && e["status"] != nil {
			return true
		}
	}
	switch {
	case strings.HasPrefix(path, "/api/v1/agents"):
		return m["success"] == false && e["code"] != nil
	case strings.HasPrefix(path, "/api/v1/calls"), strings.HasPrefix(path, "/api/v1/dnc"):
		_, isNum := e["code"].(float64)
		return isNum
	case strings.HasPrefix(path, "/api/v1/openai/"): // OpenAI's shape, which its clients parse
		_, hasType := e["type"].(string)
		_, hasParam := e["param"]
		return hasType && hasParam
	}
	return e["status"] != nil
}

func fillPath(p, id string) string {
	for strings.Contains(p, "{") {
		i, j := strings.Index(p, "{"), strings.Index(p, "}")
		p = p[:i] + url.PathEscape(id) + p[j+1:]
	}
	return p
}

// TestHostileInput sends malformed bodies, wrong types, hostile ids and
// query syntax to every documented route: never a 5xx, every error in its
// family's shape, and the database unchanged by refused requests.
func TestHostileInput(t *testing.T) {
	s := start(t, t.TempDir())
	seedIDs := seed(t, s, s.Key)
	routes := routesFromOpenAPI(t, s)
	if len(routes) < 10 {
		t.Fatalf("only %d routes documented", len(routes))
	}
	tried := 0
	check := func(rt apiRoute, label, path string, body any) resp {
		t.Helper()
		r, err := s.call(rt.method, path, s.Key, body)
		tried++
		if err != nil {
			t.Errorf("%s %s [%s]: %v", rt.method, rt.path, label, err)
			return r
		}
		if r.status >= 500 {
			t.Errorf("%s %s [%s]: %d %s", rt.method, rt.path, label, r.status, trunc(r.body))
		}
		if r.status >= 400 && !familyShapeOK(rt.path, r.body) && !rt.public {
			t.Errorf("%s %s [%s]: %d body not in the family shape: %s", rt.method, rt.path, label, r.status, trunc(r.body))
		}
		return r
	}
	for _, rt := range routes {
		path := fillPath(rt.path, seedIDs[rt.path])
		before := snapshot(t, s.db)
		if rt.method == "POST" || rt.method == "PATCH" || rt.method == "PUT" || rt.method == "DELETE" {
			for label, b := range hostileBodies() {
				if rt.method == "DELETE" && strings.Contains(rt.path, "{") {
					continue // DELETE by id takes no body
				}
				if r := check(rt, label, path, b); r.status < 400 {
					t.Errorf("%s %s [%s]: accepted with %d", rt.method, rt.path, label, r.status)
				}
			}
			for prop, typ := range rt.props {
				body := map[string]any{prop: wrongValue(typ)}
				if r := check(rt, "wrong type "+prop, path, body); r.status < 400 {
					t.Errorf("%s %s [wrong type %s]: accepted with %d", rt.method, rt.path, prop, r.status)
				}
				if strings.Contains(typ, "integer") || strings.Contains(typ, "number") {
					for _, huge := range []string{"1e999", "123456789012345678901234567890", "-1e308"} {
						b := `{"` + prop + `": ` + huge + `}`
						if r := check(rt, "huge "+prop, path, b); r.status < 400 {
							t.Errorf("%s %s [%s]: accepted with %d", rt.method, rt.path, b, r.status)
						}
					}
				}
			}
		}
		if after := snapshot(t, s.db); after != before {
			t.Errorf("%s %s: refused requests changed the database\nbefore %s\nafter  %s", rt.method, rt.path, before, after)
		}
		if strings.Contains(rt.path, "{") {
			for _, id := range hostileIDs {
				check(rt, "hostile id "+id, fillPath(rt.path, id), nil)
			}
		}
		if rt.method == "GET" {
			for _, inj := range injections {
				q := url.Values{"q": {inj}, "limit": {inj}, "offset": {inj}, "status": {inj}, "type": {inj}, "category": {inj},
					"collectionId": {inj}, "sortBy": {inj}, "minPrice": {inj}, "attr.color": {inj}, "from": {inj}}
				check(rt, "query "+inj, path+"?"+q.Encode(), nil)
			}
		}
		if rt.method == "POST" && len(rt.props) > 0 {
			for _, inj := range injections {
				body := map[string]any{}
				for prop, typ := range rt.props {
					if strings.Contains(typ, "string") {
						body[prop] = inj
					}
				}
				check(rt, "injection "+inj, path, body)
			}
		}
	}
	t.Logf("%d hostile requests over %d routes", tried, len(routes))
	if strings.Contains(s.Logs.String(), s.Key) {
		t.Fatal("an API key appears in the server log")
	}
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// TestHostileSecurityInputs: the hostile inputs of issue 27 through the
// binary. Webhook URLs whose IPv6 form embeds a private IPv4 address are
// 400 without saying what they resolve to; a notice in the URL is not
// shown (the sign-in redirect is covered in app/web).
func TestHostileSecurityInputs(t *testing.T) {
	s := start(t, t.TempDir())
	for _, u := range []string{"http://[::127.0.0.1]/h", "http://[::169.254.169.254]/h", "http://[::ffff:0:7f00:1]/h",
		"http://[::7f00:1]/h", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/h"} {
		r := s.must("POST", "/api/v2/webhooks", s.Key, map[string]any{"url": u, "events": []string{"*"}})
		if r.status != 400 || !strings.Contains(string(r.body), "not an allowed address") {
			t.Errorf("webhook %s: %d %s", u, r.status, trunc(r.body))
		}
	}
	r := s.must("GET", "/login?notice="+url.QueryEscape("Your account is locked: call +1 555 0100"), "", nil)
	if strings.Contains(string(r.body), "account is locked") {
		t.Error("/login shows a notice taken from the URL")
	}
}
