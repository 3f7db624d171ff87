package vectorstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/sqldb"
)

// Mark is the database's state when it was read, so a mirror can skip
// its catch-up query while nothing was committed since. On SQLite it is
// the WAL index header, which SQLite rewrites on every commit of any
// process (ok is false without a mapped WAL index: then the mirror always
// catches up). PostgreSQL has no such header: there it is the latest
// vector_log seq, one read of the primary key's end, cheaper than the
// catch-up's transaction (inserts into vector_log take one lock until
// their transaction ends, migration 0025, so seqs become visible in order). The mark is read before the
// catch-up, so a commit racing with it only causes one more catch-up.
func (db *Vectors) Mark(ctx context.Context) search.Mark {
	return sqldb.PerDialect[func(context.Context) search.Mark]{SQLite: db.walMark, Postgres: db.logMark}.For(db.c.Dialect())(ctx)
}

func (db *Vectors) walMark(context.Context) search.Mark {
	h, ok := db.c.WALHeader() // not ok where the WAL index cannot be mapped
	return search.Mark{Header: h, OK: ok}
}

func (db *Vectors) logMark(ctx context.Context) search.Mark {
	var seq int64
	if err := db.c.ReadRow(ctx, "SELECT coalesce(max(seq), 0) FROM vector_log").Scan(&seq); err != nil {
		return search.Mark{} // the catch-up runs and reports the error
	}
	return search.Mark{Seq: seq, OK: true}
}

// Spaces names the vector spaces whose names start with prefix ("" for
// all), for warming a mirror.
func (db *Vectors) Spaces(ctx context.Context, prefix string) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, "SELECT space FROM vector_spaces WHERE space LIKE ? ESCAPE '\\'", sqldb.LikeEscape(prefix)+"%")
	if err != nil {
		return nil, err
	}
	return sqldb.Collect(rows, sqldb.ScanOne[string])
}

// Changes opens one read-only snapshot, reads vector_log in it for a
// mirror (see search.ChangeLog) and calls read inside the snapshot.
func (db *Vectors) Changes(ctx context.Context, last int64, have func(string) bool, holdsAny bool, load []string,
	read func(tx *sql.Tx, d search.Delta) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("storage: mirror sync: %w", err)
	}
	defer tx.Rollback()
	d, err := readLogDelta(ctx, tx, last, have, holdsAny, load)
	if err != nil {
		return err
	}
	return read(tx, d)
}

// readLogDelta reads vector_log after last for a mirror that holds the
// spaces have reports (holding any at all when holdsAny), and that is asked
// to load the spaces in load. A whole-space entry (item_id NULL) reloads it.
func readLogDelta(ctx context.Context, tx *sql.Tx, last int64, have func(string) bool, holdsAny bool, load []string) (search.Delta, error) {
	d := search.Delta{Reload: map[string]bool{}, Changed: map[string][]int64{}}
	var minSeq int64
	if err := tx.QueryRowContext(ctx, "SELECT coalesce((SELECT max(seq) FROM vector_log), 0), coalesce((SELECT min(seq) FROM vector_log), 0)").Scan(&d.MaxSeq, &minSeq); err != nil {
		return d, fmt.Errorf("storage: vector log: %w", err)
	}
	for _, s := range load {
		if !have(s) {
			d.Reload[s] = true
		}
	}
	if d.MaxSeq <= last || !holdsAny {
		return d, nil
	}
	if minSeq > last+1 {
		d.ReloadAll = true
		return d, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT space, item_id FROM vector_log WHERE seq > ? AND seq <= ? ORDER BY seq", last, d.MaxSeq)
	if err != nil {
		return d, fmt.Errorf("storage: vector log: %w", err)
	}
	seen := map[string]map[int64]bool{}
	err = sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var s string
		var id sql.NullInt64
		if err := sc.Scan(&s, &id); err != nil {
			return err
		}
		if !have(s) || d.Reload[s] {
			return nil
		}
		if !id.Valid {
			d.Reload[s] = true
			return nil
		}
		if seen[s] == nil {
			seen[s] = map[int64]bool{}
		}
		if !seen[s][id.Int64] {
			seen[s][id.Int64] = true
			d.Changed[s] = append(d.Changed[s], id.Int64)
		}
		return nil
	})
	return d, err
}

// LoadSpace reads every vector of a space (an empty space when it has no
// vectors yet) and builds its int8 copy.
func (db *Vectors) LoadSpace(ctx context.Context, tx *sql.Tx, space string) (*search.VectorSpace, error) {
	var dims int
	err := tx.QueryRowContext(ctx, "SELECT dims FROM vector_spaces WHERE space = ?", space).Scan(&dims)
	if err == sql.ErrNoRows {
		return search.NewVectorSpace(0, 0), nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: load vector space: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM vectors WHERE space = ?", space).Scan(&n); err != nil {
		return nil, err
	}
	sp := search.NewVectorSpace(dims, n)
	rows, err := tx.QueryContext(ctx, "SELECT item_id, vec FROM vectors WHERE space = ?", space)
	if err != nil {
		return nil, fmt.Errorf("storage: load vector space: %w", err)
	}
	v := make([]float32, 0, dims)
	if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var id int64
		var b []byte
		if err := sc.Scan(&id, &b); err != nil {
			return err
		}
		if len(b) == 4*dims { // else written for another model before a reset; never searched
			sp.Put(id, decodeVectorInto(v[:0], b))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sp.Quantize()
	return sp, nil
}

// ReadVectors reads the current vectors of ids in a space (absent ids are
// simply missing from the result).
func (db *Vectors) ReadVectors(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]search.Vector, error) {
	var out []search.Vector
	for len(ids) > 0 {
		n := min(len(ids), 500)
		part := ids[:n]
		ids = ids[n:]
		args := make([]any, 0, n+1)
		args = append(args, space)
		for _, id := range part {
			args = append(args, id)
		}
		q := "SELECT item_id, vec FROM vectors WHERE space = ? AND item_id IN (" + strings.Repeat("?,", n-1) + "?)"
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("storage: read vectors: %w", err)
		}
		if err := sqldb.Each(rows, func(sc sqldb.Scanner) error {
			var it search.Vector
			var b []byte
			err := sc.Scan(&it.ID, &b)
			it.Vec = decodeVectorInto(nil, b)
			out = append(out, it)
			return err
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
