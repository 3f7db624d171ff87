package api

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/app/api/openapi"
	"github.com/julienschmidt/httprouter"
)

// Each feature documents its routes in app/openapi/<feature>.json, an
// object {"paths": {...}, "components": {"schemas": {...}}}; the document
// is their merge over the route table, and a test keeps both in step.
//
//go:embed openapi/*.json
var openapiFS embed.FS

var paramRE = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// openapiPath turns /api/v1/calls/:id into /api/v1/calls/{id}.
func openapiPath(p string) string { return paramRE.ReplaceAllString(p, "{$1}") }

type openapiFragment struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components map[string]map[string]json.RawMessage `json:"components"` // schemas, responses, ...
}

func loadFragments() ([]openapiFragment, error) {
	names, err := fs.Glob(openapiFS, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []openapiFragment
	for _, n := range names {
		b, err := openapiFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var f openapiFragment
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// openAPIDocument builds the OpenAPI 3.1 document of every route.
func (s *Server) openAPIDocument() (map[string]any, error) {
	frags, err := loadFragments()
	if err != nil {
		return nil, err
	}
	examples, err := openapi.LoadExamples()
	if err != nil {
		return nil, err
	}
	ops := map[string]map[string]json.RawMessage{}
	components := map[string]any{}
	for _, f := range frags {
		for p, m := range f.Paths {
			if ops[p] == nil {
				ops[p] = map[string]json.RawMessage{}
			}
			for meth, op := range m {
				ops[p][strings.ToLower(meth)] = op
			}
		}
		for kind, m := range f.Components {
			dst, _ := components[kind].(map[string]json.RawMessage)
			if dst == nil {
				dst = map[string]json.RawMessage{}
				components[kind] = dst
			}
			for n, v := range m {
				dst[n] = v
			}
		}
	}
	components["securitySchemes"] = map[string]any{
		"apiKey": map[string]any{"type": "apiKey", "in": "header", "name": "x-api-key"},
		"bearer": map[string]any{"type": "http", "scheme": "bearer"},
	}
	paths := map[string]map[string]any{}
	for _, rt := range s.table {
		p := openapiPath(rt.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		m := strings.ToLower(rt.method)
		var op map[string]any
		if raw, ok := ops[p][m]; ok {
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("openapi %s %s: %w", rt.method, p, err)
			}
		} else {
			op = map[string]any{"responses": map[string]any{"default": map[string]any{"description": "See the README"}}}
		}
		if _, ok := op["summary"]; !ok {
			op["summary"] = rt.summary
		}
		if _, ok := op["operationId"]; !ok {
			op["operationId"] = rt.operation
		}
		standardResponses(rt, op)
		shared, _ := components["responses"].(map[string]json.RawMessage)
		if err := openapi.Attach(op, examples[rt.operation], shared, errorExample(rt)); err != nil {
			return nil, fmt.Errorf("openapi %s %s examples: %w", rt.method, p, err)
		}
		if rt.auth == authNone {
			op["security"] = []any{}
		}
		paths[p][m] = op
	}
	if shared, ok := components["responses"].(map[string]json.RawMessage); ok {
		if err := openapi.FinishShared(shared, paths, rateLimitedExample()); err != nil {
			return nil, err
		}
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "agentd API", "version": s.cfg.Version,
			"license":     map[string]any{"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
			"description": "Self-hosted control plane for AI voice and chat agents."},
		"servers":    []any{map[string]any{"url": "/"}},
		"security":   []any{map[string]any{"apiKey": []any{}}, map[string]any{"bearer": []any{}}},
		"paths":      paths,
		"components": components,
	}, nil
}

// openAPI serves the document, built once: the route table is fixed once
// the server is.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	doc, err := s.openapiDoc()
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, doc)
	return nil
}

// standardResponses documents what the middleware answers on every route,
// so no fragment has to repeat it: 413 for a body over the route's limit
// (in the family's error shape) and, on keyed /v1 routes, the 429 of the
// rate limit (its own shape; /v2 answers 401 instead).
func standardResponses(rt route, op map[string]any) {
	resps, _ := op["responses"].(map[string]any)
	if resps == nil {
		return
	}
	if _, ok := resps["413"]; !ok {
		resps["413"] = familyErrorResponse(rt.family, "Request body over the route's limit")
	}
	if rt.auth != authNone && !strings.HasPrefix(rt.path, "/api/v2/") {
		resps["429"] = map[string]any{"$ref": "#/components/responses/RateLimited"}
	}
}

// familyErrorResponse is a response in a family's error shape.
func familyErrorResponse(f Family, desc string) map[string]any {
	schema := map[Family]string{FamilyKB: "KBError", FamilyListings: "ListingError", FamilyCalls: "CallError",
		FamilyAgents: "AgentV1ErrorBody", FamilyOpenAI: "OpenAIError"}[f]
	if schema == "" {
		return map[string]any{"$ref": "#/components/responses/V2Error"}
	}
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{
		"schema": map[string]any{"$ref": "#/components/schemas/" + schema}}}}
}
