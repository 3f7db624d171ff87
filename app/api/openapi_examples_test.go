package api

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/api/openapi"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// exampleAt is one example of the served document and where its schema is.
type exampleAt struct {
	where  string // "POST /api/v1/agents 201 application/json"
	schema string // JSON pointer of the schema
	value  any
}

var operationIDRE = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)

// Every operation of the served document has a stable operationId and
// examples: its request body's, its success response's and its error
// responses'; and each example is valid against its own schema, objects
// closed as in the schema check of real responses.
func TestOpenAPIExamples(t *testing.T) {
	e := newTestEnv(t)
	code, _, body := e.do("GET", "/api/openapi.json", "", nil)
	if code != 200 {
		t.Fatalf("GET /api/openapi.json: %d", code)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	var found []exampleAt
	ops := map[string]bool{}
	for _, p := range sortedKeys(paths) {
		for _, m := range sortedKeys(paths[p].(map[string]any)) {
			op := paths[p].(map[string]any)[m].(map[string]any)
			name := strings.ToUpper(m) + " " + p
			id, _ := op["operationId"].(string)
			if !operationIDRE.MatchString(id) || regexp.MustCompile(`^func[0-9]+$`).MatchString(id) {
				t.Errorf("%s: operationId %q is not a stable name", name, id)
			}
			ops[id] = true
			base := "#/paths/" + escapePointer(p) + "/" + m
			if rb, ok := op["requestBody"].(map[string]any); ok {
				exs := mediaExamples(t, name+" request", base+"/requestBody", rb)
				found = append(found, exs...)
			}
			var success, failure int
			resps, _ := op["responses"].(map[string]any)
			for _, code := range sortedKeys(resps) {
				r, ptr := resps[code].(map[string]any), base+"/responses/"+code
				if ref, ok := r["$ref"].(string); ok {
					r, ptr = dig(doc, "components", "responses", strings.TrimPrefix(ref, "#/components/responses/")).(map[string]any), ref
				}
				exs := mediaExamples(t, name+" "+code, ptr, r)
				if len(exs) > 0 && (code[0] == '2' || code == "101") { // 101: a WebSocket's first message
					success++
				} else if len(exs) > 0 && (code[0] == '4' || code[0] == '5') {
					failure++
				}
				found = append(found, exs...)
			}
			if success == 0 {
				t.Errorf("%s: no success response with an example", name)
			}
			if failure == 0 {
				t.Errorf("%s: no error response with an example", name)
			}
		}
	}
	examples, err := openapi.LoadExamples()
	if err != nil {
		t.Fatal(err)
	}
	for id := range examples {
		if !ops[id] {
			t.Errorf("app/openapi/examples names %s, which is no operation", id)
		}
	}

	// The examples were taken out first: closing the schemas walks the
	// whole document, examples included.
	closeObjects(doc, allOfTargets(doc))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem://examples.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	for _, ex := range found {
		sch, err := c.Compile(url + ex.schema)
		if err != nil {
			t.Errorf("%s: schema %s: %v", ex.where, ex.schema, err)
			continue
		}
		if err := sch.Validate(ex.value); err != nil {
			t.Errorf("%s: the example does not match its schema: %v", ex.where, err)
		}
	}
	if len(found) < 3*len(ops) {
		t.Errorf("only %d examples for %d operations", len(found), len(ops))
	}
}

// mediaExamples are the examples of a request body or response (its
// `content`), each with its schema's pointer; a media type with a schema
// but no example is an error.
func mediaExamples(t *testing.T, where, ptr string, obj map[string]any) []exampleAt {
	t.Helper()
	content, _ := obj["content"].(map[string]any)
	var out []exampleAt
	for _, mt := range sortedKeys(content) {
		m, _ := content[mt].(map[string]any)
		if _, ok := m["schema"]; !ok {
			continue
		}
		sch := ptr + "/content/" + escapePointer(mt) + "/schema"
		w := where + " " + mt
		if ex, ok := m["example"]; ok {
			out = append(out, exampleAt{w, sch, deepCopy(ex)})
		}
		exs, _ := m["examples"].(map[string]any)
		for _, n := range sortedKeys(exs) {
			out = append(out, exampleAt{w + " " + n, sch, deepCopy(dig(exs[n], "value"))})
		}
		if _, ok := m["example"]; !ok && len(exs) == 0 {
			t.Errorf("%s: no example", w)
		}
	}
	return out
}

// deepCopy keeps an example apart from the document closeObjects changes.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, c := range x {
			s[i] = deepCopy(c)
		}
		return s
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
