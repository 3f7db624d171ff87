package listings

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
)

// ImportProblem is one invalid line or row of an import file.
type ImportProblem struct {
	Line    int    `json:"line"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// String reads "line 12: price: must be >= 0".
func (p ImportProblem) String() string {
	if p.Path == "" {
		return fmt.Sprintf("line %d: %s", p.Line, p.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", p.Line, p.Path, p.Message)
}

// ImportGroup is the valid listings of one category, in file order; a sync
// never mixes categories, so deleteStale stays per category.
type ImportGroup struct {
	Category string
	Items    []Input
	Lines    []int // the file line of each item
}

// ImportPlan is a validated import file.
type ImportPlan struct {
	Groups   []ImportGroup
	Valid    int
	Problems []ImportProblem
}

// PlanImport validates every record (a category override replaces each
// listing's category) and groups the valid listings by category in order
// of first appearance.
func PlanImport(recs []ImportRecord, category *string) (ImportPlan, error) {
	var p ImportPlan
	if category != nil {
		c := strings.TrimSpace(*category)
		if utf8.RuneCountInString(c) > maxCategory {
			return p, errs.Invalidf("--category must be at most %d characters", maxCategory)
		}
		category = &c
	}
	idx := map[string]int{}
	for _, r := range recs {
		if r.Err != "" {
			p.Problems = append(p.Problems, ImportProblem{Line: r.Line, Message: r.Err})
			continue
		}
		in, problems := Parse(r.Raw)
		for _, e := range problems {
			p.Problems = append(p.Problems, ImportProblem{Line: r.Line, Path: e.Path, Message: e.Message})
		}
		if len(problems) > 0 {
			continue
		}
		if category != nil {
			in.Category = *category
		}
		g, ok := idx[in.Category]
		if !ok {
			g = len(p.Groups)
			idx[in.Category] = g
			p.Groups = append(p.Groups, ImportGroup{Category: in.Category})
		}
		p.Groups[g].Items = append(p.Groups[g].Items, in)
		p.Groups[g].Lines = append(p.Groups[g].Lines, r.Line)
		p.Valid++
	}
	return p, nil
}

// Chunks splits a group into syncs of at most MaxSync.
func (g ImportGroup) Chunks() [][]Input {
	var out [][]Input
	for i := 0; i < len(g.Items); i += MaxSync {
		out = append(out, g.Items[i:min(i+MaxSync, len(g.Items))])
	}
	return out
}

// MarshalJSON writes the listing as the sync API takes it, the price as
// an exact JSON number.
func (in Input) MarshalJSON() ([]byte, error) {
	m := map[string]any{"externalId": in.ExternalID, "title": in.Title, "currency": in.Currency,
		"attributes": in.Attributes}
	if in.Description != "" {
		m["description"] = in.Description
	}
	if in.Category != "" {
		m["category"] = in.Category
	}
	if in.HasPrice {
		m["price"] = json.Number(formatCents(in.PriceCents))
	}
	if in.SourceURL != "" {
		m["sourceUrl"] = in.SourceURL
	}
	return json.Marshal(m)
}

// ExternalIDs are the external ids of the group.
func (g ImportGroup) ExternalIDs() []string {
	out := make([]string, len(g.Items))
	for i, in := range g.Items {
		out[i] = in.ExternalID
	}
	return out
}

// Import writes a plan straight into the database, one transaction per
// chunk of at most MaxSync. With deleteStale, each category's stale
// listings (absent from the whole group, however many chunks it spans) are
// deleted with its first chunk. progress is called with the number of
// listings done after each chunk.
func (s *Service) Import(ctx context.Context, orgID string, plan ImportPlan,
	deleteStale bool, progress func(done int)) (SyncReport, error) {
	var total SyncReport
	done := 0
	for _, g := range plan.Groups {
		keep := g.ExternalIDs()
		for i, chunk := range g.Chunks() {
			rep, err := s.Sync(ctx, SyncRequest{
				OrgID: orgID, Items: chunk, DeleteStale: deleteStale && i == 0, StaleCategory: g.Category, Keep: keep,
			})
			if err != nil {
				return total, err
			}
			total.Add(rep)
			done += len(chunk)
			if progress != nil {
				progress(done)
			}
		}
	}
	return total, nil
}
