package listingstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// writeListingsBatch stores every write with a few multi-row statements
// instead of several statements per listing: on PostgreSQL each statement
// is a network round trip, and a 1,000-listing sync made 7,000 of them. Any
// failure fails the whole batch; the caller then redoes the sync listing by
// listing to find and report the failing ones.
func writeListingsBatch(ctx context.Context, tx *sql.Tx, orgID string, writes []ListingWrite, now int64) ([]ListingResult, error) {
	out := make([]ListingResult, len(writes))
	var inserts []int // indexes of the writes that create a listing
	var updated []int64
	var upd *sql.Stmt // prepared at the first update: a sync of new listings has none
	for i := range writes {
		w := &writes[i]
		price, attrs := listingPriceAttrs(&w.Listing)
		if w.Seq == 0 {
			inserts = append(inserts, i)
			continue
		}
		if upd == nil {
			var err error
			if upd, err = tx.PrepareContext(ctx, updateListingSQL); err != nil {
				return nil, err
			}
			defer upd.Close()
		}
		res, err := upd.ExecContext(ctx, w.Title, w.Description, w.Category, price, w.Currency, attrs,
			w.SourceURL, w.Hash, w.EmbedHash, now, w.Seq, orgID)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, fmt.Errorf("listing %q: %w", w.ExternalID, sqldb.ErrNotFound)
		}
		out[i] = ListingResult{Seq: w.Seq, ID: w.ID}
		updated = append(updated, w.Seq)
	}
	if err := deleteListingAttrs(ctx, tx, updated); err != nil {
		return nil, err
	}
	if err := insertListings(ctx, tx, orgID, writes, inserts, now, out); err != nil {
		return nil, err
	}
	var attrArgs, logArgs []any
	nAttrs := 0
	for i := range writes {
		for _, t := range writes[i].Terms {
			attrArgs = append(attrArgs, orgID, t.Key, t.Value, out[i].Seq)
			nAttrs++
		}
		logArgs = append(logArgs, listingTextSpace(orgID), out[i].Seq)
	}
	if err := sqldb.ExecRows(ctx, tx, "INSERT INTO listing_attrs (org_id, key, value, listing_id) VALUES ", "(?, ?, ?, ?)",
		" ON CONFLICT DO NOTHING", 4, attrArgs); err != nil {
		return nil, err
	}
	if err := sqldb.ExecRows(ctx, tx, "INSERT INTO vector_log (space, item_id) VALUES ", "(?, ?)", "", 2, logArgs); err != nil {
		return nil, err
	}
	return out, nil
}

// insertListings inserts the writes at idx with multi-row INSERTs and
// records each new row's sequence id and UUID in out. RETURNING gives back
// the external id with each row id, so the order of the returned rows does
// not matter.
func insertListings(ctx context.Context, tx *sql.Tx, orgID string, writes []ListingWrite, idx []int, now int64, out []ListingResult) error {
	for len(idx) > 0 {
		part := idx[:min(len(idx), sqldb.RowsPerStatement)]
		idx = idx[len(part):]
		args := make([]any, 0, 14*len(part))
		byExt := make(map[string]int, len(part))
		for _, i := range part {
			l := &writes[i].Listing
			price, attrs := listingPriceAttrs(l)
			out[i].ID = uuid.NewString()
			byExt[l.ExternalID] = i
			args = append(args, out[i].ID, orgID, l.ExternalID, l.Title, l.Description, l.Category, price,
				l.Currency, attrs, l.SourceURL, writes[i].Hash, writes[i].EmbedHash, now, now)
		}
		if len(byExt) != len(part) {
			return fmt.Errorf("storage: one external id twice in a sync: %w", sqldb.ErrConflict)
		}
		rows, err := tx.QueryContext(ctx, insertListingHead+sqldb.Placeholders(listingRow, len(part))+" RETURNING id, external_id", args...)
		if err != nil {
			return err
		}
		n := 0
		if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var seq int64
			var ext string
			if err := sc.Scan(&seq, &ext); err != nil {
				return err
			}
			i, ok := byExt[ext]
			if !ok {
				return fmt.Errorf("storage: insert returned unknown listing %q", ext)
			}
			out[i].Seq = seq
			n++
			return nil
		}); err != nil {
			return err
		}
		if n != len(part) {
			return fmt.Errorf("storage: inserted %d listings of %d", n, len(part))
		}
	}
	return nil
}

// deleteListingAttrs removes the attribute terms of the listings seqs.
func deleteListingAttrs(ctx context.Context, tx *sql.Tx, seqs []int64) error {
	for len(seqs) > 0 {
		part := seqs[:min(len(seqs), sqldb.RowsPerStatement)]
		seqs = seqs[len(part):]
		args := make([]any, len(part))
		for i, s := range part {
			args[i] = s
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM listing_attrs WHERE listing_id IN ("+sqldb.Placeholders("?", len(part))+")", args...); err != nil {
			return err
		}
	}
	return nil
}

// listingPriceAttrs returns the stored forms of a listing's price (NULL
// without one) and attributes ("{}" when empty).
func listingPriceAttrs(l *Listing) (any, string) {
	var price any
	if l.HasPrice {
		price = l.PriceCents
	}
	attrs := string(l.Attributes)
	if attrs == "" {
		attrs = "{}"
	}
	return price, attrs
}
