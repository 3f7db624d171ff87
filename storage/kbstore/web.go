package kbstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
	"github.com/google/uuid"
)

// Web source kinds.
const (
	WebPage  = "page"
	WebCrawl = "crawl"
)

// WebSource is a page fetched from a URL, or a crawl of a site, kept fresh.
type WebSource struct {
	ID            string
	OrgID         string
	CollectionID  string
	Kind          string // WebPage or WebCrawl
	URL           string
	ExternalID    string // a page's source; a crawl's own key (its URL)
	Title         string // "" takes the page's own title
	Metadata      []byte // JSON object given to each source it writes
	Refresh       time.Duration
	Crawl         []byte // JSON of the crawl's settings (crawls only)
	ETag          string
	LastModified  string
	LastFetchedAt *time.Time
	LastError     *string
	Pages         int
	NextFetchAt   *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

const webColumns = `id, org_id, collection_id, kind, url, external_id, title, metadata, refresh_ms, crawl, etag,
	last_modified, last_fetched_at, last_error, pages, next_fetch_at, created_at, updated_at`

func scanWeb(scan func(...any) error) (WebSource, error) {
	var w WebSource
	var refresh int64
	var crawl, lastErr sql.NullString
	var fetched, next sql.NullInt64
	var created, updated int64
	if err := scan(&w.ID, &w.OrgID, &w.CollectionID, &w.Kind, &w.URL, &w.ExternalID, &w.Title, &w.Metadata, &refresh,
		&crawl, &w.ETag, &w.LastModified, &fetched, &lastErr, &w.Pages, &next, &created, &updated); err != nil {
		return w, err
	}
	w.Refresh = time.Duration(refresh) * time.Millisecond
	if crawl.Valid {
		w.Crawl = []byte(crawl.String)
	}
	if lastErr.Valid {
		w.LastError = &lastErr.String
	}
	w.LastFetchedAt, w.NextFetchAt = msPtr(fetched), msPtr(next)
	w.CreatedAt, w.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	return w, nil
}

func msPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64)
	return &t
}

func nullMS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return sqldb.MS(*t)
}

func nullString(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// SaveWeb creates or replaces a web source by (collection, kind,
// external id), keeping its validators, and returns it. A collection of
// another organization is sqldb.ErrNotFound.
func (db *Knowledge) SaveWeb(ctx context.Context, w WebSource) (WebSource, error) {
	now := time.Now()
	var out WebSource
	err := db.c.Write(ctx, func(tx *sql.Tx) error {
		var owner string
		if err := tx.QueryRowContext(ctx, `SELECT org_id FROM kb_collections WHERE id = ?`, w.CollectionID).Scan(&owner); err != nil || owner != w.OrgID {
			if err == nil || errors.Is(err, sql.ErrNoRows) {
				return sqldb.ErrNotFound
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO kb_web (id, org_id, collection_id, kind, url, external_id, title, metadata,
			refresh_ms, crawl, last_fetched_at, last_error, pages, next_fetch_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (collection_id, kind, external_id) DO UPDATE SET url = excluded.url, title = excluded.title,
			metadata = excluded.metadata, refresh_ms = excluded.refresh_ms, crawl = excluded.crawl,
			last_fetched_at = coalesce(excluded.last_fetched_at, kb_web.last_fetched_at), last_error = excluded.last_error,
			pages = excluded.pages, next_fetch_at = excluded.next_fetch_at, updated_at = excluded.updated_at,
			etag = CASE WHEN kb_web.url = excluded.url THEN kb_web.etag ELSE '' END,
			last_modified = CASE WHEN kb_web.url = excluded.url THEN kb_web.last_modified ELSE '' END`,
			uuid.NewString(), w.OrgID, w.CollectionID, w.Kind, w.URL, w.ExternalID, w.Title, string(orEmptyObject(w.Metadata)),
			w.Refresh.Milliseconds(), nullString(w.Crawl), nullMS(w.LastFetchedAt), w.LastError, w.Pages, nullMS(w.NextFetchAt),
			sqldb.MS(now), sqldb.MS(now)); err != nil {
			return err
		}
		var err error
		out, err = scanWeb(tx.QueryRowContext(ctx, `SELECT `+webColumns+` FROM kb_web WHERE collection_id = ? AND kind = ? AND external_id = ?`,
			w.CollectionID, w.Kind, w.ExternalID).Scan)
		return err
	})
	return out, err
}

func orEmptyObject(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// ClaimWeb takes one web source due by now for owner until now+lease, or
// reports ok false; next is when the earliest other one is due (zero:
// none), so an idle worker knows when to look again.
func (db *Knowledge) ClaimWeb(ctx context.Context, owner string, lease time.Duration) (w WebSource, ok bool, next time.Time, err error) {
	now := time.Now()
	var id sql.NullString
	var due sql.NullInt64
	if err := db.c.ReadRowFresh(ctx, `SELECT (SELECT id FROM kb_web WHERE next_fetch_at <= ? AND (lease_until IS NULL OR lease_until < ?)
		ORDER BY next_fetch_at LIMIT 1), (SELECT next_fetch_at FROM kb_web WHERE next_fetch_at IS NOT NULL ORDER BY next_fetch_at LIMIT 1)`,
		sqldb.MS(now), sqldb.MS(now)).Scan(&id, &due); err != nil {
		return w, false, next, err
	}
	if due.Valid {
		next = time.UnixMilli(due.Int64)
		if next.Before(now) {
			next = now.Add(lease) // held by another worker: look again when its lease may have run out
		}
	}
	if !id.Valid {
		return w, false, next, nil
	}
	err = db.c.WriteClaim(ctx, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `UPDATE kb_web SET lease_owner = ?, lease_until = ?
			WHERE id = ? AND next_fetch_at <= ? AND (lease_until IS NULL OR lease_until < ?) RETURNING `+webColumns,
			owner, sqldb.MS(now.Add(lease)), id.String, sqldb.MS(now), sqldb.MS(now))
		var err error
		w, err = scanWeb(row.Scan)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // another worker took it first
		}
		ok = err == nil
		return err
	})
	return w, ok, next, err
}

// WebFetched is how a fetch of a web source went.
type WebFetched struct {
	ETag, LastModified string
	Error              string // "" when it went well
	Pages              int
	At                 time.Time
}

// FinishWeb records owner's fetch of a web source and when it is due
// next (its refresh interval after this fetch; never for a one-off).
func (db *Knowledge) FinishWeb(ctx context.Context, id, owner string, f WebFetched) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		var lastErr any
		if f.Error != "" {
			lastErr = f.Error
		}
		_, err := tx.ExecContext(ctx, `UPDATE kb_web SET etag = ?, last_modified = ?, last_error = ?, pages = ?,
			last_fetched_at = ?, updated_at = ?, lease_owner = NULL, lease_until = NULL,
			next_fetch_at = CASE WHEN refresh_ms > 0 THEN ? + refresh_ms ELSE NULL END
			WHERE id = ? AND lease_owner = ?`,
			f.ETag, f.LastModified, lastErr, f.Pages, sqldb.MS(f.At), sqldb.MS(f.At), sqldb.MS(f.At), id, owner)
		return err
	})
}

// ListWeb returns a collection's web sources, oldest first.
func (db *Knowledge) ListWeb(ctx context.Context, collectionID string) ([]WebSource, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+webColumns+` FROM kb_web WHERE collection_id = ? ORDER BY created_at, id`, collectionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WebSource
	for rows.Next() {
		w, err := scanWeb(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// DeleteWeb stops refreshing a web source of the organization (the
// sources it wrote stay; delete them as any source).
func (db *Knowledge) DeleteWeb(ctx context.Context, orgID, id string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM kb_web WHERE id = ? AND org_id = ?`, id, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return sqldb.ErrNotFound
		}
		return nil
	})
}

// FinishWebValidators stores the validators of a fetch made outside the
// worker (the first one, in the request that added the page).
func (db *Knowledge) FinishWebValidators(ctx context.Context, id, etag, lastModified string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE kb_web SET etag = ?, last_modified = ? WHERE id = ?`, etag, lastModified, id)
		return err
	})
}
