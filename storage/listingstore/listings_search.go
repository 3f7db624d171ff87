package listingstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/sqldb"
)

// ListingFilter narrows a listing search. Every set field must hold.
type ListingFilter struct {
	OrgID    string
	Category *string // nil: any category; "" matches listings without one
	MinCents *int64  // listings without a price never match a price bound
	MaxCents *int64
	Attrs    []AttrFilter
}

// AttrFilter holds when the listing has Key with one of Values (the
// normalised forms of AttrTerm).
type AttrFilter struct {
	Key    string
	Values []string
}

// Empty reports whether the filter narrows nothing beyond the organization.
func (f ListingFilter) Empty() bool {
	return f.Category == nil && f.MinCents == nil && f.MaxCents == nil && len(f.Attrs) == 0
}

// where is the filter as SQL on listings aliased l. Each attribute filter is
// an IN over the (org_id, key, value) index of listing_attrs, never a scan
// of the attributes JSON.
func (f ListingFilter) where() (string, []any) {
	var b strings.Builder
	args := []any{f.OrgID}
	b.WriteString("l.org_id = ?")
	if f.Category != nil {
		b.WriteString(" AND l.category = ?")
		args = append(args, *f.Category)
	}
	if f.MinCents != nil {
		b.WriteString(" AND l.price_cents >= ?")
		args = append(args, *f.MinCents)
	}
	if f.MaxCents != nil {
		b.WriteString(" AND l.price_cents <= ?")
		args = append(args, *f.MaxCents)
	}
	for _, a := range f.Attrs {
		b.WriteString(" AND l.id IN (SELECT listing_id FROM listing_attrs WHERE org_id = ? AND key = ? AND value IN (")
		args = append(args, f.OrgID, a.Key)
		for i, v := range a.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("?")
			args = append(args, v)
		}
		b.WriteString("))")
	}
	return b.String(), args
}

// FilterListings returns up to limit listings matching the filter, newest first.
func (db *Listings) FilterListings(ctx context.Context, f ListingFilter, limit int) ([]Listing, error) {
	where, args := f.where()
	return db.queryListings(ctx, "SELECT "+prefixed("l.", listingColumns)+" FROM listings l WHERE "+where+
		" ORDER BY l.created_at DESC, l.id DESC LIMIT ?", append(args, limit)...)
}

// FilterListingSeqs returns the sequence ids of every listing matching the
// filter, for restricting a search. They come back as one comma-separated
// row: tens of thousands of one-column rows cost far more in the driver.
func (db *Listings) FilterListingSeqs(ctx context.Context, f ListingFilter) ([]int64, error) {
	d := db.c.Dialect()
	q := "SELECT " + d.GroupConcat("l.id") + " FROM listings l WHERE "
	where, args := f.where()
	if len(f.Attrs) > 0 {
		// Drive from the first attribute's index entries (CROSS JOIN fixes
		// the order; no join at all when nothing else is asked): walking
		// the organization's listings and probing each one costs more.
		a := f.Attrs[0]
		rest := f
		rest.Attrs = f.Attrs[1:]
		where, args = rest.where()
		q = "SELECT " + d.GroupConcat("a0.listing_id") + " FROM listing_attrs a0 WHERE "
		if !rest.Empty() {
			q = "SELECT " + d.GroupConcat("l.id") + " FROM listing_attrs a0 " + d.OrderedJoin() + " listings l ON l.id = a0.listing_id WHERE "
		} else {
			where, args = "1 = 1", nil
		}
		q += "a0.org_id = ? AND a0.key = ? AND a0.value IN (?" + strings.Repeat(", ?", len(a.Values)-1) + ") AND "
		pre := []any{f.OrgID, a.Key}
		for _, v := range a.Values {
			pre = append(pre, v)
		}
		args = append(pre, args...)
	}
	var list sql.NullString
	if err := db.r.QueryRowContext(ctx, q+where, args...).Scan(&list); err != nil {
		return nil, fmt.Errorf("storage: filter listings: %w", err)
	}
	if !list.Valid || list.String == "" {
		return []int64{}, nil
	}
	out := make([]int64, 0, strings.Count(list.String, ",")+1)
	seen := make(map[int64]bool, cap(out))
	for _, p := range strings.Split(list.String, ",") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("storage: filter listings: %w", err)
		}
		if !seen[n] { // an array attribute can match twice
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// Field weights of a listing's keyword index: a title word counts most,
// then the category, the attributes and the description.
const (
	weightTitle       = 4
	weightCategory    = 2
	weightAttributes  = 1.5
	weightDescription = 1
)

// KeywordListings ranks the organization's listings by BM25 against the
// words of query (every word must match; title words weigh most) and
// returns up to limit sequence ids, best first. allow, when not nil, keeps
// only those listings (the filter's matches).
func (db *Listings) KeywordListings(ctx context.Context, orgID, query string, allow map[int64]bool, limit int) ([]int64, error) {
	x := db.text
	q := search.TextQuery{Terms: x.Tokens(query), K: limit, All: true}
	if allow != nil {
		q.Allow = make([]int64, 0, len(allow))
		for id, ok := range allow {
			if ok {
				q.Allow = append(q.Allow, id)
			}
		}
	}
	hits, err := x.Query(ctx, listingTextSpace(orgID), q)
	if err != nil {
		return nil, fmt.Errorf("storage: keyword listings: %w", err)
	}
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out, nil
}

// ListingTextMatch scores the organization's listings seqs against the
// words of query (any word; see TextIndex.Match), in the order of seqs.
func (db *Listings) ListingTextMatch(ctx context.Context, orgID, query string, seqs []int64) ([]search.TextMatch, error) {
	return db.text.Match(ctx, listingTextSpace(orgID), query, seqs)
}

// listingTextSpace is the keyword index space of an organization's
// listings: every listing write logs its row under it.
func listingTextSpace(orgID string) string { return "listing-text:" + orgID }

// loadText reads an organization's listings as keyword documents:
// title, category, attribute keys and values, description.
func (db *Listings) loadText(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]search.TextDoc, error) {
	org, ok := strings.CutPrefix(space, "listing-text:")
	if !ok {
		return nil, nil
	}
	q := "SELECT id, title, description, category, attributes FROM listings WHERE org_id = ?"
	args := []any{org}
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		q += " AND id IN (" + strings.Repeat("?,", len(ids)-1) + "?)"
		for _, id := range ids {
			args = append(args, id)
		}
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: load listing text: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (search.TextDoc, error) {
		var id int64
		var title, desc, cat, attrs string
		err := sc.Scan(&id, &title, &desc, &cat, &attrs)
		return search.TextDoc{ID: id, Fields: []search.Field{
			{Text: title, Weight: weightTitle},
			{Text: cat, Weight: weightCategory},
			{Text: attrWords(attrs), Weight: weightAttributes},
			{Text: desc, Weight: weightDescription},
		}}, err
	})
}

// attrWords is the text of an attributes object: its keys and its values
// (array elements included), one per line.
func attrWords(attrs string) string {
	dec := json.NewDecoder(strings.NewReader(attrs))
	dec.UseNumber()
	var b strings.Builder
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return b.String()
		}
		switch v := t.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else if depth--; depth == 0 {
				return b.String() // the end: no read past it
			}
			continue
		case string:
			b.WriteString(v)
		case json.Number:
			b.WriteString(v.String())
		case bool:
			b.WriteString(strconv.FormatBool(v))
		default:
			continue // null
		}
		b.WriteByte('\n')
	}
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
