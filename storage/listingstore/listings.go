// Package listingstore is the SQL of listings: the listing rows, their
// attribute terms for filters, their vectors (through storage/vectorstore)
// and their keyword text (logged for the keyword mirror it keeps), and the
// listings.sync.completed event a sync writes.
package listingstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/vectorstore"
	"github.com/google/uuid"
)

// EventListingsSynced is the event type a sync writes in its transaction.
const EventListingsSynced = "listings.sync.completed"

// Listings is the listings store over the shared connection.
type Listings struct {
	c    *sqldb.DB
	r    *sql.DB
	text *search.TextIndex // keyword index of listings, loaded per organization on first search
}

// New returns the listings store over c; its keyword index follows vec's
// change log.
func New(c *sqldb.DB, vec *vectorstore.Vectors) *Listings {
	db := &Listings{c: c, r: c.Reader()}
	db.text = search.NewTextIndex(vec, db.loadText)
	return db
}

// ListingsSynced is what one listings sync wrote: the data its
// listings.sync.completed event records (SnapshotVersion).
type ListingsSynced struct {
	OrgID    string
	Created  []SyncedListing
	Updated  []SyncedListing
	Failed   int
	Deleted  int
	Category *string // the stale scope's category when deleteStale ran
}

// SyncedListing is what the event records of one written listing: the
// fields its public view shows, not the attributes or description.
type SyncedListing struct {
	ID, ExternalID, Title string
	HasPrice              bool
	PriceCents            int64
	Currency, SourceURL   string
	UpdatedAt             time.Time
}

// Listing is the recorded listing with the fields it holds.
func (l SyncedListing) Listing() Listing {
	return Listing{ID: l.ID, ExternalID: l.ExternalID, Title: l.Title, HasPrice: l.HasPrice, PriceCents: l.PriceCents,
		Currency: l.Currency, SourceURL: l.SourceURL, UpdatedAt: l.UpdatedAt, CreatedAt: l.UpdatedAt}
}

// SnapshotVersion is the format of the data listings.sync.completed
// records (sqldb.Event.Version): a ListingsSynced as JSON, read back with
// DecodeListingsSynced; the events feature renders the public body from it.
const SnapshotVersion = 1

// DecodeListingsSynced reads the data of a listings.sync.completed event
// recorded in format version.
func DecodeListingsSynced(data []byte, version int) (ListingsSynced, error) {
	var s ListingsSynced
	if version != SnapshotVersion {
		return s, fmt.Errorf("storage: listings sync snapshot format %d", version)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("storage: listings sync snapshot: %w", err)
	}
	return s, nil
}

// Listing is one stored listing of an organization.
type Listing struct {
	Seq         int64 // integer row id: the listing's id in the vector index
	ID          string
	OrgID       string
	ExternalID  string
	Title       string
	Description string
	Category    string // "" means no category
	HasPrice    bool
	PriceCents  int64 // exact price in hundredths when HasPrice
	Currency    string
	Attributes  json.RawMessage // canonical JSON object
	SourceURL   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ListingState is what a sync needs to know about a stored listing to
// decide between create, update and unchanged.
type ListingState struct {
	Seq       int64
	ID        string
	Hash      []byte
	EmbedHash []byte
}

// AttrTerm is one row of the attribute index: a key and one normalised value.
type AttrTerm struct {
	Key   string
	Value string
}

// ListingWrite is one listing to create (Seq 0) or update (Seq of the row).
type ListingWrite struct {
	Listing
	Hash      []byte     // hash of every stored field
	EmbedHash []byte     // hash of the embedded text
	Terms     []AttrTerm // attribute index rows
	Keywords  string     // unused: the keyword index reads the attributes; kept until callers stop setting it
	Vec       []float32  // new vector; nil keeps the stored one
}

// StaleScope deletes, in the same transaction as a sync, the listings of
// Category whose external id is not in Keep.
type StaleScope struct {
	Category string
	Keep     []string
}

// ListingResult is the outcome of one ListingWrite.
type ListingResult struct {
	Seq int64
	ID  string
	Err error // the write failed and was rolled back (the others stand)
}

// SyncOutcome is what SyncListings did.
type SyncOutcome struct {
	Results []ListingResult // one per write, in order
	Deleted []int64         // sequence ids removed by the stale scope
}

// VectorSpec names the vector space (and its model) a sync writes the
// listings' vectors to, in the same transaction as the listings.
type VectorSpec struct {
	Space string
	Model vectorstore.VectorModel
}

// ListingStates returns, by external id, the stored state of the listed
// external ids of the organization (missing ones are absent from the map).
func (db *Listings) ListingStates(ctx context.Context, orgID string, externalIDs []string) (map[string]ListingState, error) {
	ids, err := json.Marshal(externalIDs)
	if err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT external_id, id, uid, hash, embed_hash FROM listings
		WHERE org_id = ? AND external_id IN (SELECT value FROM json_each(?))`, orgID, string(ids))
	if err != nil {
		return nil, fmt.Errorf("storage: listing states: %w", err)
	}
	out := make(map[string]ListingState, len(externalIDs))
	if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var ext string
		var st ListingState
		err := sc.Scan(&ext, &st.Seq, &st.ID, &st.Hash, &st.EmbedHash)
		out[ext] = st
		return err
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// SyncListings writes every listing in one immediate transaction: inserts
// get a new UUID, updates replace the row and its attribute terms, and each
// write is logged for the keyword index. A write that fails is rolled back
// alone (its savepoint) and reported in its result. Then stale listings are deleted, and with vs the
// new vectors are put and the deleted listings' vectors removed. A space
// made by another embedder model is reset first (its listings re-embed as
// they are synced again).
func (db *Listings) SyncListings(ctx context.Context, orgID string, writes []ListingWrite, stale *StaleScope, vs *VectorSpec) (SyncOutcome, error) {
	// Savepoints make SQLite journal every touched page a second time, so
	// the common case runs without them, batched into multi-row statements;
	// only when a write fails is the transaction redone listing by listing,
	// one savepoint each.
	out, err := db.syncListings(ctx, orgID, writes, stale, vs, false)
	if errors.Is(err, errItemFailed) {
		out, err = db.syncListings(ctx, orgID, writes, stale, vs, true)
	}
	if err != nil {
		return SyncOutcome{}, fmt.Errorf("storage: sync listings: %w", err)
	}
	return out, nil
}

// errItemFailed aborts the savepoint-free attempt of a sync.
var errItemFailed = errors.New("a listing write failed")

func (db *Listings) syncListings(ctx context.Context, orgID string, writes []ListingWrite, stale *StaleScope, vs *VectorSpec, savepoints bool) (SyncOutcome, error) {
	out := SyncOutcome{Results: make([]ListingResult, len(writes))}
	now := sqldb.MS(time.Now().UTC())
	// On PostgreSQL a sync runs at READ COMMITTED under a lock of its
	// organization's listings, taken first: everything it reads and writes
	// is that organization's (and the vector log, ordered at commit), so
	// syncs of one organization run one after the other and read each
	// other's commits, and those of different organizations never wait for
	// each other. Under SERIALIZABLE, concurrent large syncs failed each
	// other past the retries.
	err := db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		if err := db.c.Dialect().LockKey(ctx, tx, "listings:"+orgID); err != nil {
			return err
		}
		if !savepoints {
			res, err := writeListingsBatch(ctx, tx, orgID, writes, now)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return errItemFailed
			}
			copy(out.Results, res)
		} else if err := writeListingsOneByOne(ctx, tx, db.c.Dialect(), orgID, writes, now, out.Results); err != nil {
			return err
		}
		if stale != nil {
			var err error
			if out.Deleted, err = deleteStale(ctx, tx, orgID, *stale); err != nil {
				return err
			}
		}
		if err := vectorstore.PruneLog(ctx, tx); err != nil {
			return err
		}
		if vs != nil {
			if err := syncListingVectors(ctx, tx, *vs, writes, out); err != nil {
				return err
			}
		}
		return db.emitListingsSynced(ctx, tx, orgID, writes, out, stale, now)
	})
	return out, err
}

// syncListingVectors writes the vectors of the successful writes and
// removes those of deleted listings.
func syncListingVectors(ctx context.Context, tx *sql.Tx, vs VectorSpec, writes []ListingWrite, out SyncOutcome) error {
	var items []vectorstore.VectorItem
	for i, r := range out.Results {
		if r.Err == nil && writes[i].Vec != nil {
			items = append(items, vectorstore.VectorItem{ID: r.Seq, Vec: writes[i].Vec})
		}
	}
	if len(items) > 0 {
		err := vectorstore.EnsureSpace(ctx, tx, vs.Space, vs.Model)
		if errors.Is(err, sqldb.ErrConflict) {
			err = vectorstore.ResetSpace(ctx, tx, vs.Space, vs.Model)
		}
		if err != nil {
			return err
		}
		if err := vectorstore.PutItems(ctx, tx, vs.Space, vs.Model.Dims, items); err != nil {
			return err
		}
	}
	return vectorstore.DeleteItems(ctx, tx, vs.Space, out.Deleted)
}

// writeListingsOneByOne stores each write under its own savepoint, so a
// failing write is rolled back alone and reported in its result.
func writeListingsOneByOne(ctx context.Context, tx *sql.Tx, d sqldb.Dialect, orgID string, writes []ListingWrite, now int64, out []ListingResult) error {
	st, err := prepareListingStmts(ctx, tx, d)
	if err != nil {
		return err
	}
	defer st.close()
	for i := range writes {
		w := &writes[i]
		if _, err := tx.ExecContext(ctx, "SAVEPOINT item"); err != nil {
			return err
		}
		seq, id, err := st.write(ctx, orgID, w, now)
		if err != nil {
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO item"); rerr != nil {
				return rerr
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			out[i] = ListingResult{Seq: w.Seq, ID: w.ID, Err: err}
		} else {
			out[i] = ListingResult{Seq: seq, ID: id}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE item"); err != nil {
			return err
		}
	}
	return nil
}

// The statements that create and update a listing, shared by the batched
// and the one-by-one writes.
const (
	insertListingHead = `INSERT INTO listings (uid, org_id, external_id, title, description, category, price_cents,
		currency, attributes, source_url, hash, embed_hash, created_at, updated_at) VALUES `
	listingRow       = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	updateListingSQL = `UPDATE listings SET title = ?, description = ?, category = ?, price_cents = ?, currency = ?,
		attributes = ?, source_url = ?, hash = ?, embed_hash = ?, updated_at = ? WHERE id = ? AND org_id = ?`
)

// listingStmts are the statements of a sync, prepared once per transaction.
type listingStmts struct {
	insert, update, delAttrs, addAttr, logText *sql.Stmt
	returning                                  bool // insert returns the id (PostgreSQL has no LastInsertId)
}

func prepareListingStmts(ctx context.Context, tx *sql.Tx, d sqldb.Dialect) (*listingStmts, error) {
	insertTail := d.InsertedID()
	s := &listingStmts{returning: insertTail != ""}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.insert, insertListingHead + listingRow + insertTail},
		{&s.update, updateListingSQL},
		{&s.delAttrs, `DELETE FROM listing_attrs WHERE listing_id = ?`},
		{&s.addAttr, `INSERT INTO listing_attrs (org_id, key, value, listing_id) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`},
		{&s.logText, `INSERT INTO vector_log (space, item_id) VALUES (?, ?)`},
	} {
		st, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			s.close()
			return nil, err
		}
		*p.dst = st
	}
	return s, nil
}

func (s *listingStmts) close() {
	for _, st := range []*sql.Stmt{s.insert, s.update, s.delAttrs, s.addAttr, s.logText} {
		if st != nil {
			st.Close()
		}
	}
}

// write stores one listing with its attribute terms and logs it for the
// keyword index.
func (s *listingStmts) write(ctx context.Context, orgID string, w *ListingWrite, now int64) (int64, string, error) {
	l := &w.Listing
	price, attrs := listingPriceAttrs(l)
	seq, id := l.Seq, l.ID
	if seq == 0 {
		id = uuid.NewString()
		args := []any{id, orgID, l.ExternalID, l.Title, l.Description, l.Category, price,
			l.Currency, attrs, l.SourceURL, w.Hash, w.EmbedHash, now, now}
		var err error
		if s.returning {
			err = s.insert.QueryRowContext(ctx, args...).Scan(&seq)
		} else {
			var res sql.Result
			if res, err = s.insert.ExecContext(ctx, args...); err == nil {
				seq, err = res.LastInsertId()
			}
		}
		if err != nil {
			if sqldb.IsUnique(err) {
				return 0, "", fmt.Errorf("listing %q: %w", l.ExternalID, sqldb.ErrConflict)
			}
			return 0, "", err
		}
	} else {
		res, err := s.update.ExecContext(ctx, l.Title, l.Description, l.Category, price, l.Currency, attrs,
			l.SourceURL, w.Hash, w.EmbedHash, now, seq, orgID)
		if err != nil {
			return 0, "", err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return 0, "", fmt.Errorf("listing %q: %w", l.ExternalID, sqldb.ErrNotFound)
		}
		if _, err := s.delAttrs.ExecContext(ctx, seq); err != nil {
			return 0, "", err
		}
	}
	for _, t := range w.Terms {
		if _, err := s.addAttr.ExecContext(ctx, orgID, t.Key, t.Value, seq); err != nil {
			return 0, "", err
		}
	}
	if _, err := s.logText.ExecContext(ctx, listingTextSpace(orgID), seq); err != nil {
		return 0, "", err
	}
	return seq, id, nil
}

// deleteStale hard-deletes the listings of the scope's category that are
// not kept, with their attribute terms, and logs them for the keyword index.
func deleteStale(ctx context.Context, tx *sql.Tx, orgID string, sc StaleScope) ([]int64, error) {
	keep, err := json.Marshal(sqldb.NonNil(sc.Keep))
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `DELETE FROM listings WHERE org_id = ? AND category = ?
		AND external_id NOT IN (SELECT value FROM json_each(?)) RETURNING id`, orgID, sc.Category, string(keep))
	if err != nil {
		return nil, err
	}
	seqs, err := sqldb.Collect(rows, sqldb.ScanOne[int64])
	if err != nil {
		return nil, err
	}
	// Attribute rows go with the listing (ON DELETE CASCADE).
	for _, s := range seqs {
		if _, err := tx.ExecContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES (?, ?)", listingTextSpace(orgID), s); err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

const listingColumns = `id, uid, org_id, external_id, title, description, category, price_cents, currency,
	attributes, source_url, created_at, updated_at`

func scanListing(s sqldb.Scanner) (Listing, error) {
	var l Listing
	var price sql.NullInt64
	var attrs string
	var created, updated int64
	err := s.Scan(&l.Seq, &l.ID, &l.OrgID, &l.ExternalID, &l.Title, &l.Description, &l.Category, &price,
		&l.Currency, &attrs, &l.SourceURL, &created, &updated)
	if err != nil {
		return Listing{}, err
	}
	l.HasPrice, l.PriceCents = price.Valid, price.Int64
	l.Attributes = json.RawMessage(attrs)
	l.CreatedAt, l.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return l, nil
}

// ActiveListings returns up to limit listings of the organization (of one
// category when category is not nil), ordered by external id, and how many
// there are in all.
func (db *Listings) ActiveListings(ctx context.Context, orgID string, category *string, limit int) ([]Listing, int, error) {
	where, args := "org_id = ?", []any{orgID}
	if category != nil {
		where += " AND category = ?"
		args = append(args, *category)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM listings WHERE "+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("storage: count listings: %w", err)
	}
	ls, err := db.queryListings(ctx, "SELECT "+listingColumns+" FROM listings WHERE "+where+
		" ORDER BY category, external_id LIMIT ?", append(args, limit)...)
	return ls, total, err
}

// ListingsBySeq reads the listings of the organization with the given
// sequence ids, in the order given (missing ids are skipped).
func (db *Listings) ListingsBySeq(ctx context.Context, orgID string, seqs []int64) ([]Listing, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	// Placeholders, not json_each: the planner then looks rows up by id
	// instead of walking the organization's index.
	args := make([]any, 0, len(seqs))
	for _, s := range seqs {
		args = append(args, s)
	}
	ls, err := db.queryListings(ctx, "SELECT "+listingColumns+" FROM listings WHERE id IN (?"+
		strings.Repeat(", ?", len(seqs)-1)+")", args...)
	if err != nil {
		return nil, err
	}
	by := make(map[int64]Listing, len(ls))
	for _, l := range ls {
		if l.OrgID == orgID {
			by[l.Seq] = l
		}
	}
	out := make([]Listing, 0, len(ls))
	for _, s := range seqs {
		if l, ok := by[s]; ok {
			out = append(out, l)
		}
	}
	return out, nil
}

func (db *Listings) queryListings(ctx context.Context, q string, args ...any) ([]Listing, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: query listings: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (Listing, error) { return scanListing(sc) })
}

// GetListing reads one listing of the organization by external id.
func (db *Listings) GetListing(ctx context.Context, orgID, externalID string) (Listing, error) {
	row := db.r.QueryRowContext(ctx, "SELECT "+listingColumns+" FROM listings WHERE org_id = ? AND external_id = ?", orgID, externalID)
	l, err := scanListing(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Listing{}, fmt.Errorf("listing %q: %w", externalID, sqldb.ErrNotFound)
	}
	return l, err
}

// emitListingsSynced writes listings.sync.completed for a sync's writes.
func (db *Listings) emitListingsSynced(ctx context.Context, tx *sql.Tx, orgID string, writes []ListingWrite, out SyncOutcome,
	stale *StaleScope, now int64) error {
	s := ListingsSynced{OrgID: orgID, Deleted: len(out.Deleted), Created: []SyncedListing{}, Updated: []SyncedListing{}}
	if stale != nil {
		c := stale.Category
		s.Category = &c
	}
	for i, r := range out.Results {
		if r.Err != nil {
			s.Failed++
			continue
		}
		w := &writes[i].Listing
		l := SyncedListing{ID: r.ID, ExternalID: w.ExternalID, Title: w.Title, HasPrice: w.HasPrice, PriceCents: w.PriceCents,
			Currency: w.Currency, SourceURL: w.SourceURL, UpdatedAt: sqldb.FromMS(now)}
		if writes[i].Seq == 0 {
			s.Created = append(s.Created, l)
		} else {
			s.Updated = append(s.Updated, l)
		}
	}
	_, err := db.c.InsertEvents(ctx, tx, []sqldb.PendingEvent{{Type: EventListingsSynced, Subject: "listings:" + orgID, OrgID: orgID,
		Data: s, Version: SnapshotVersion}})
	return err
}
