package analysis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounds on a caller's JSON Schema (issue 32). A schema's validation cost
// is about its size once every $ref is expanded in place times the
// answer's size: both are bounded, and validation is stopped at its
// deadline besides.
const (
	// MaxSchemaDepth bounds the nesting of objects and arrays.
	MaxSchemaDepth = 32
	// MaxSchemaExpanded bounds the nodes (objects and arrays) of the
	// schema with every $ref replaced by its target, counted before the
	// schema is compiled: 30 levels of doubled $ref are 2^30 nodes.
	MaxSchemaExpanded = 10000
	// MaxStructuredDataBytes bounds the model's structuredData answer
	// (and so the work of a keyword over it, uniqueItems' pairs).
	MaxStructuredDataBytes = 16 << 10
	// ValidateTimeout bounds one validation of an answer.
	ValidateTimeout = 2 * time.Second
)

// Every object is taken for a schema, even inside enum or properties: a
// "$ref" string anywhere is followed, so no keyword the count does not
// know hides a reference from it.
//
// refused keywords change how references resolve (dynamic scope, embedded
// resources); a self-contained analysis schema has no use for them, and
// without them every $ref is a JSON pointer into this one document.
var refused = map[string]bool{"$dynamicRef": true, "$recursiveRef": true, "$dynamicAnchor": true, "$recursiveAnchor": true, "$anchor": true}

// costOf counts doc's nodes with every $ref expanded in place, refusing a
// nesting deeper than MaxSchemaDepth, a count beyond MaxSchemaExpanded, a
// $ref cycle and any reference that is not a local JSON pointer. It runs
// in time linear in the document: a reference target's count is memoised.
func costOf(doc any) error {
	c := &cost{root: doc, memo: map[string]int{}, open: map[string]bool{}}
	n, err := c.node(doc, 0)
	if err != nil {
		return err
	}
	if n > MaxSchemaExpanded {
		return c.tooBig()
	}
	return nil
}

type cost struct {
	root any
	memo map[string]int  // pointer -> expanded count
	open map[string]bool // pointers being expanded (a cycle when met again)
}

func (c *cost) tooBig() error {
	return fmt.Errorf("expands to more than %d nodes once its $ref are followed (max %d)", MaxSchemaExpanded, MaxSchemaExpanded)
}

// node is v's expanded count, saturated just above the bound.
func (c *cost) node(v any, depth int) (int, error) {
	if depth > MaxSchemaDepth {
		return 0, fmt.Errorf("nests deeper than %d levels (max %d)", MaxSchemaDepth, MaxSchemaDepth)
	}
	n := 1
	add := func(k int) error {
		n += k
		if n > MaxSchemaExpanded {
			return c.tooBig()
		}
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if _, isStr := child.(string); isStr && refused[k] {
				return 0, fmt.Errorf("uses %s, which is not allowed: use $ref to #/$defs/...", k)
			}
			if _, isStr := child.(string); isStr && k == "$id" && depth > 0 {
				return 0, errors.New("has $id inside a subschema, which is not allowed: the schema must be one resource")
			}
			if k == "$ref" {
				if s, ok := child.(string); ok {
					m, err := c.ref(s)
					if err != nil {
						return 0, err
					}
					if err := add(m); err != nil {
						return 0, err
					}
					continue
				}
			}
			m, err := c.node(child, depth+1)
			if err != nil {
				return 0, err
			}
			if err := add(m); err != nil {
				return 0, err
			}
		}
	case []any:
		for _, child := range x {
			m, err := c.node(child, depth+1)
			if err != nil {
				return 0, err
			}
			if err := add(m); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// ref is the expanded count of the $ref's target, walked at its own depth
// in the document (so its memoised count holds wherever it is used).
func (c *cost) ref(s string) (int, error) {
	frag, ok := strings.CutPrefix(s, "#")
	if !ok {
		return 0, fmt.Errorf("is not a valid JSON Schema here: $ref %q points outside it (only #/... references are allowed)", s)
	}
	ptr, err := url.PathUnescape(frag)
	if err != nil || (ptr != "" && !strings.HasPrefix(ptr, "/")) {
		return 0, fmt.Errorf("has $ref %q: only JSON pointers (#/$defs/name) are allowed", s)
	}
	if n, ok := c.memo[ptr]; ok {
		return n, nil
	}
	if c.open[ptr] {
		return 0, fmt.Errorf("has a $ref cycle through %q: a recursive schema is not allowed", s)
	}
	target, ok := lookup(c.root, ptr)
	if !ok {
		return 0, fmt.Errorf("has $ref %q, which points at nothing", s)
	}
	c.open[ptr] = true
	n, err := c.node(target, strings.Count(ptr, "/"))
	delete(c.open, ptr)
	if err != nil {
		return 0, err
	}
	c.memo[ptr] = n
	return n, nil
}

// lookup resolves a JSON pointer (RFC 6901) in doc.
func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	v := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			child, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = child
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// errValidateTimeout is a validation that ran past ValidateTimeout.
var errValidateTimeout = fmt.Errorf("validating structuredData took longer than %s (the bound ValidateTimeout)", ValidateTimeout)

// Schema is a compiled structuredData schema whose validation can be
// stopped: every schema object carries a keyword-less extension that the
// library runs at each evaluation, and that unwinds the validation once
// stop is set. One validation at a time.
type Schema struct {
	s    *jsonschema.Schema
	stop *atomic.Bool
}

// stopped is the panic that unwinds a validation given up on.
type stopped struct{}

type stopExt struct{ stop *atomic.Bool }

func (e stopExt) Validate(*jsonschema.ValidatorContext, any) {
	if e.stop.Load() {
		panic(stopped{})
	}
}

// stoppable registers the extension on c; its flag stops validations of
// what c compiles.
func stoppable(c *jsonschema.Compiler) *atomic.Bool {
	stop := new(atomic.Bool)
	c.RegisterVocabulary(&jsonschema.Vocabulary{URL: "urn:agentd:stop", Compile: func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
		return stopExt{stop}, nil
	}})
	c.AssertVocabs() // run it whatever the schema's draft says of vocabularies
	return stop
}

// validateWithin validates v against sch, giving up when ValidateTimeout
// passes or ctx ends: the validation is stopped at its next schema
// evaluation. A single keyword's own work (uniqueItems over the answer)
// cannot be cut, and is bounded by MaxStructuredDataBytes.
func validateWithin(ctx context.Context, sch *Schema, v any) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopped); !ok {
					panic(r)
				}
				done <- errValidateTimeout
			}
		}()
		done <- sch.s.Validate(v)
	}()
	t := time.NewTimer(ValidateTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		sch.stop.Store(true)
		return errValidateTimeout
	case <-ctx.Done():
		sch.stop.Store(true)
		return ctx.Err()
	}
}
