package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"unicode"
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
func (db *DB) FilterListings(ctx context.Context, f ListingFilter, limit int) ([]Listing, error) {
	where, args := f.where()
	return db.queryListings(ctx, "SELECT "+prefixed("l.", listingColumns)+" FROM listings l WHERE "+where+
		" ORDER BY l.created_at DESC, l.id DESC LIMIT ?", append(args, limit)...)
}

// FilterListingSeqs returns the sequence ids of every listing matching the
// filter, for restricting a search. They come back as one comma-separated
// row: tens of thousands of one-column rows cost far more in the driver.
func (db *DB) FilterListingSeqs(ctx context.Context, f ListingFilter) ([]int64, error) {
	q := "SELECT group_concat(l.id) FROM listings l WHERE "
	where, args := f.where()
	if len(f.Attrs) > 0 {
		// Drive from the first attribute's index entries (CROSS JOIN fixes
		// the order; no join at all when nothing else is asked): walking
		// the organization's listings and probing each one costs more.
		a := f.Attrs[0]
		rest := f
		rest.Attrs = f.Attrs[1:]
		where, args = rest.where()
		q = "SELECT group_concat(a0.listing_id) FROM listing_attrs a0 WHERE "
		if !rest.Empty() {
			q = "SELECT group_concat(l.id) FROM listing_attrs a0 CROSS JOIN listings l ON l.id = a0.listing_id WHERE "
		} else {
			where, args = "1", nil
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

// KeywordListings ranks the organization's listings by BM25 against the
// words of query (any word may match; title words weigh most) and returns
// up to limit sequence ids, best first. allow, when not nil, keeps only
// those listings (the filter's matches): FTS5 ranks all matches itself and
// the loop stops once limit allowed ones are found.
func (db *DB) KeywordListings(ctx context.Context, orgID, query string, allow map[int64]bool, limit int) ([]int64, error) {
	match := ftsQuery(query)
	if match == "" || limit <= 0 {
		return nil, nil
	}
	match = `org : "` + orgToken(orgID) + `" AND {title description category attrs} : (` + match + `)`
	q, args := "SELECT rowid FROM listings_fts WHERE listings_fts MATCH ? ORDER BY rank", []any{match}
	if allow == nil {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: keyword listings: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() && len(out) < limit {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if allow == nil || allow[s] {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}

// orgToken is an organization id as one FTS token (no separators).
func orgToken(orgID string) string {
	return "o" + strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, orgID)
}

// ftsQuery turns free text into a safe FTS5 query: each word quoted (so no
// operator or column syntax gets through), any of them may match.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) > 32 {
		words = words[:32]
	}
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " AND ")
}

// prefixed qualifies a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
