package storage

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
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
// by another model is ErrConflict: reset it with ResetVectorSpace first.
func (db *DB) PutVectors(ctx context.Context, space string, m VectorModel, items []VectorItem) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if err := ensureSpace(ctx, tx, space, m); err != nil {
			return err
		}
		return putVectors(ctx, tx, space, m.Dims, items)
	})
}

// DeleteVectors removes vectors of a space by id; unknown ids are ignored.
func (db *DB) DeleteVectors(ctx context.Context, space string, ids []int64) error {
	return db.write(ctx, func(tx *sql.Tx) error { return deleteVectors(ctx, tx, space, ids) })
}

// DropVectorSpace removes a space and all its vectors.
func (db *DB) DropVectorSpace(ctx context.Context, space string) error {
	return db.write(ctx, func(tx *sql.Tx) error { return dropSpace(ctx, tx, space) })
}

// ResetVectorSpace removes every vector of a space and records model m as
// its model (used when the embedder changes).
func (db *DB) ResetVectorSpace(ctx context.Context, space string, m VectorModel) error {
	return db.write(ctx, func(tx *sql.Tx) error { return resetSpace(ctx, tx, space, m) })
}

// VectorSpaceModel returns the model recorded for a space (ErrNotFound when
// the space has no vectors yet).
func (db *DB) VectorSpaceModel(ctx context.Context, space string) (VectorModel, error) {
	var m VectorModel
	err := db.r.QueryRowContext(ctx, "SELECT embedder, model, dims FROM vector_spaces WHERE space = ?", space).
		Scan(&m.Embedder, &m.Model, &m.Dims)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("vector space %q: %w", space, ErrNotFound)
	}
	return m, err
}

// ensureSpace creates space for model m, or checks that it was made by m.
func ensureSpace(ctx context.Context, tx *sql.Tx, space string, m VectorModel) error {
	if m.Dims <= 0 {
		return fmt.Errorf("storage: vector space %q: dimensions must be positive", space)
	}
	var cur VectorModel
	err := tx.QueryRowContext(ctx, "SELECT embedder, model, dims FROM vector_spaces WHERE space = ?", space).
		Scan(&cur.Embedder, &cur.Model, &cur.Dims)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO vector_spaces (space, embedder, model, dims, updated_at) VALUES (?, ?, ?, ?, ?)",
			space, m.Embedder, m.Model, m.Dims, ms(time.Now()))
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
		return fmt.Errorf("vector space %q holds %s vectors, not %s: %w", space, cur, m, ErrConflict)
	}
	return nil
}

// putVectors writes vectors of a space inside tx and logs each change.
func putVectors(ctx context.Context, tx *sql.Tx, space string, dims int, items []VectorItem) error {
	if len(items) == 0 {
		return nil
	}
	put, err := tx.PrepareContext(ctx, "INSERT INTO vectors (space, item_id, vec) VALUES (?, ?, ?) ON CONFLICT (space, item_id) DO UPDATE SET vec = excluded.vec")
	if err != nil {
		return err
	}
	defer put.Close()
	logq, err := tx.PrepareContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES (?, ?)")
	if err != nil {
		return err
	}
	defer logq.Close()
	for _, it := range items {
		if len(it.Vec) != dims {
			return fmt.Errorf("storage: vector %d of space %q has %d dimensions, want %d", it.ID, space, len(it.Vec), dims)
		}
		if _, err := put.ExecContext(ctx, space, it.ID, encodeVector(it.Vec)); err != nil {
			return err
		}
		if _, err := logq.ExecContext(ctx, space, it.ID); err != nil {
			return err
		}
	}
	return pruneVectorLog(ctx, tx)
}

// deleteVectors removes vectors of a space inside tx and logs each change.
func deleteVectors(ctx context.Context, tx *sql.Tx, space string, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	del, err := tx.PrepareContext(ctx, "DELETE FROM vectors WHERE space = ? AND item_id = ?")
	if err != nil {
		return err
	}
	defer del.Close()
	logq, err := tx.PrepareContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES (?, ?)")
	if err != nil {
		return err
	}
	defer logq.Close()
	for _, id := range ids {
		if _, err := del.ExecContext(ctx, space, id); err != nil {
			return err
		}
		if _, err := logq.ExecContext(ctx, space, id); err != nil {
			return err
		}
	}
	return nil
}

// dropSpace removes a space, its vectors and its model record inside tx.
func dropSpace(ctx context.Context, tx *sql.Tx, space string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM vectors WHERE space = ?", space); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM vector_spaces WHERE space = ?", space); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO vector_log (space, item_id) VALUES (?, NULL)", space)
	return err
}

// resetSpace empties a space and records model m for it inside tx.
func resetSpace(ctx context.Context, tx *sql.Tx, space string, m VectorModel) error {
	if err := dropSpace(ctx, tx, space); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO vector_spaces (space, embedder, model, dims, updated_at) VALUES (?, ?, ?, ?, ?)",
		space, m.Embedder, m.Model, m.Dims, ms(time.Now()))
	return err
}

// pruneVectorLog keeps the change log bounded.
func pruneVectorLog(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", vectorLogKeep)
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
