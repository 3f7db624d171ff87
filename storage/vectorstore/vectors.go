// Package vectorstore is the SQL of vectors: spaces, their model, the
// vectors of each item, and vector_log, the change log every in-memory
// mirror follows (search.VectorIndex, search.TextIndex: Vectors implements
// search.ChangeLog and search.VectorSource). Stores that write mirrored
// items (knowledge, listings) call the Tx helpers inside their own
// transactions, so an item and its log entry commit together.
package vectorstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// VectorModel identifies the embedder that made a vector space's vectors:
// vectors of different models are not comparable, so a space holds one
// model only and a change of model resets it.
type VectorModel struct {
	Embedder string // implementation, e.g. "builtin", "openai"
	Model    string // model name within the implementation
	Dims     int
}

// String is the model as one line for logs and errors.
func (m VectorModel) String() string {
	return fmt.Sprintf("%s/%s/%d", m.Embedder, m.Model, m.Dims)
}

// Vectors is the vector store over the shared connection.
type Vectors struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the vector store over c.
func New(c *sqldb.DB) *Vectors { return &Vectors{c: c, r: c.Reader()} }

// VectorItem is one vector of a space, keyed by the caller's int64 id (a
// chunk id, a listing rowid). Vectors should be L2-normalised: search
// scores are dot products, i.e. cosine similarity for unit vectors.
type VectorItem struct {
	ID  int64
	Vec []float32
}

// vectorLogKeep is how many vector_log rows are kept; a mirror further
// behind than that reloads its spaces.
const vectorLogKeep = 500_000

// PutVectors stores (inserting or replacing) vectors of a space in one
// transaction, creating the space for model m when it is new. A space made
// by another model is sqldb.ErrConflict: reset it with ResetVectorSpace first.
func (db *Vectors) PutVectors(ctx context.Context, space string, m VectorModel, items []VectorItem) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error {
		if err := EnsureSpace(ctx, tx, space, m); err != nil {
			return err
		}
		return PutItems(ctx, tx, space, m.Dims, items)
	})
}

// DeleteVectors removes vectors of a space by id; unknown ids are ignored.
func (db *Vectors) DeleteVectors(ctx context.Context, space string, ids []int64) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error { return DeleteItems(ctx, tx, space, ids) })
}

// DropVectorSpace removes a space and all its vectors.
func (db *Vectors) DropVectorSpace(ctx context.Context, space string) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error { return DropSpace(ctx, tx, space) })
}

// ResetVectorSpace removes every vector of a space and records model m as
// its model (used when the embedder changes).
func (db *Vectors) ResetVectorSpace(ctx context.Context, space string, m VectorModel) error {
	return db.c.Write(ctx, func(tx *sql.Tx) error { return ResetSpace(ctx, tx, space, m) })
}

// VectorSpaceModel returns the model recorded for a space (sqldb.ErrNotFound when
// the space has no vectors yet).
func (db *Vectors) VectorSpaceModel(ctx context.Context, space string) (VectorModel, error) {
	var m VectorModel
	err := db.r.QueryRowContext(ctx, "SELECT embedder, model, dims FROM vector_spaces WHERE space = ?", space).
		Scan(&m.Embedder, &m.Model, &m.Dims)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("vector space %q: %w", space, sqldb.ErrNotFound)
	}
	return m, err
}

// EnsureSpace creates space for model m, or checks that it was made by m.
func EnsureSpace(ctx context.Context, tx *sql.Tx, space string, m VectorModel) error {
	if m.Dims <= 0 {
		return fmt.Errorf("storage: vector space %q: dimensions must be positive", space)
	}
	var cur VectorModel
	err := tx.QueryRowContext(ctx, "SELECT embedder, model, dims FROM vector_spaces WHERE space = ?", space).
		Scan(&cur.Embedder, &cur.Model, &cur.Dims)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO vector_spaces (space, embedder, model, dims, updated_at) VALUES (?, ?, ?, ?, ?)",
			space, m.Embedder, m.Model, m.Dims, sqldb.MS(time.Now()))
		if err != nil {
			return err
		}
		// A whole-space entry makes mirrors that saw the space empty reload it.
		_, err = tx.ExecContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES (?, NULL)", space)
		return err
	}
	if err != nil {
		return err
	}
	if cur != m {
		return fmt.Errorf("vector space %q holds %s vectors, not %s: %w", space, cur, m, sqldb.ErrConflict)
	}
	return nil
}

// vectorRowsPerInsert keeps a multi-row vector write under SQLite's limit
// of bound parameters.
const vectorRowsPerInsert = 500

// PutItems writes vectors of a space inside tx and logs each change, with
// multi-row statements.
func PutItems(ctx context.Context, tx *sql.Tx, space string, dims int, items []VectorItem) error {
	if len(items) == 0 {
		return nil
	}
	for len(items) > 0 {
		part := items[:min(len(items), vectorRowsPerInsert)]
		items = items[len(part):]
		args := make([]any, 0, 3*len(part))
		ids := make([]int64, len(part))
		for i, it := range part {
			if len(it.Vec) != dims {
				return fmt.Errorf("storage: vector %d of space %q has %d dimensions, want %d", it.ID, space, len(it.Vec), dims)
			}
			args = append(args, space, it.ID, encodeVector(it.Vec))
			ids[i] = it.ID
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO vectors (space, item_id, vec) VALUES "+sqldb.Placeholders("(?, ?, ?)", len(part))+
			" ON CONFLICT (space, item_id) DO UPDATE SET vec = excluded.vec", args...); err != nil {
			return err
		}
		if err := LogItems(ctx, tx, space, ids); err != nil {
			return err
		}
	}
	return PruneLog(ctx, tx)
}

// LogItems appends changes of ids in a space to vector_log.
func LogItems(ctx context.Context, tx *sql.Tx, space string, ids []int64) error {
	args := make([]any, 0, 2*len(ids))
	for _, id := range ids {
		args = append(args, space, id)
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES "+sqldb.Placeholders("(?, ?)", len(ids)), args...)
	return err
}

// DeleteItems removes vectors of a space inside tx and logs each change.
func DeleteItems(ctx context.Context, tx *sql.Tx, space string, ids []int64) error {
	for len(ids) > 0 {
		part := ids[:min(len(ids), vectorRowsPerInsert)]
		ids = ids[len(part):]
		args := make([]any, 0, 1+len(part))
		args = append(args, space)
		for _, id := range part {
			args = append(args, id)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM vectors WHERE space = ? AND item_id IN ("+sqldb.Placeholders("?", len(part))+")", args...); err != nil {
			return err
		}
		if err := LogItems(ctx, tx, space, part); err != nil {
			return err
		}
	}
	return nil
}

// DropSpace removes a space, its vectors and its model record inside tx.
func DropSpace(ctx context.Context, tx *sql.Tx, space string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM vectors WHERE space = ?", space); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM vector_spaces WHERE space = ?", space); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES (?, NULL)", space)
	return err
}

// ResetSpace empties a space and records model m for it inside tx.
func ResetSpace(ctx context.Context, tx *sql.Tx, space string, m VectorModel) error {
	if err := DropSpace(ctx, tx, space); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO vector_spaces (space, embedder, model, dims, updated_at) VALUES (?, ?, ?, ?, ?)",
		space, m.Embedder, m.Model, m.Dims, sqldb.MS(time.Now()))
	return err
}

// PruneLog keeps the change log bounded: once it holds a tenth more
// than vectorLogKeep entries it drops the oldest (the check reads the two
// ends of the primary key; the delete runs once per 50,000 changes).
func PruneLog(ctx context.Context, tx *sql.Tx) error {
	var lo, hi sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT (SELECT min(seq) FROM vector_log), (SELECT max(seq) FROM vector_log)").Scan(&lo, &hi); err != nil || !lo.Valid {
		return err
	}
	if hi.Int64-lo.Int64 < vectorLogKeep+vectorLogKeep/10 {
		return nil
	}
	_, err := tx.ExecContext(ctx, "DELETE FROM vector_log WHERE seq <= ?", hi.Int64-vectorLogKeep)
	return err
}

// encodeVector is the stored form: little-endian float32, as sqlite-vec reads it.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVectorInto appends the float32s of a stored blob to dst.
func decodeVectorInto(dst []float32, b []byte) []float32 {
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst
}
