package search

import (
	"context"
	"database/sql"
)

// The in-memory indexes below (VectorIndex, TextIndex) mirror rows that the
// stores under storage/ own. They hold no SQL: a ChangeLog, implemented by
// storage/vectorstore over its vector_log table, tells them what changed,
// and the store that owns the items reads them inside the same snapshot.

// Mark is the database's state when it was read, so a mirror can skip its
// catch-up while nothing was committed since (see vectorstore's Mark).
type Mark struct {
	Header [48]byte // SQLite: the WAL index header, rewritten on every commit
	Seq    int64    // PostgreSQL: the newest change-log seq
	OK     bool     // false: unknown, always catch up
}

// same reports whether both marks were read and are equal.
func (m Mark) same(o Mark) bool { return m.OK && o.OK && m == o }

// Delta is what the change log says a mirror must do to catch up: spaces to
// load whole, and ids changed per space it holds.
type Delta struct {
	MaxSeq    int64
	Reload    map[string]bool
	ReloadAll bool // the log was pruned past the mirror: reload what it holds
	Changed   map[string][]int64
}

// ChangeLog is the log of changes of every mirrored item: an item's change
// is logged in the transaction that writes it, by this process or another
// one on the same database.
type ChangeLog interface {
	// Mark reads the database's state cheaply.
	Mark(ctx context.Context) Mark
	// Spaces names the spaces whose names start with prefix.
	Spaces(ctx context.Context, prefix string) ([]string, error)
	// Changes opens one read-only snapshot, reads the log after last for a
	// mirror holding the spaces have reports (any at all when holdsAny)
	// and asked to load those of load, and calls read inside the snapshot.
	Changes(ctx context.Context, last int64, have func(string) bool, holdsAny bool, load []string,
		read func(tx *sql.Tx, d Delta) error) error
}

// Vector is one stored vector of a space.
type Vector struct {
	ID  int64
	Vec []float32
}

// VectorSource is the change log of vectors and the reads of a snapshot
// that a VectorIndex needs.
type VectorSource interface {
	ChangeLog
	// LoadSpace reads every vector of a space (an empty space when none).
	LoadSpace(ctx context.Context, tx *sql.Tx, space string) (*VectorSpace, error)
	// ReadVectors reads the current vectors of ids (absent ids are missing).
	ReadVectors(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]Vector, error)
}

// TextDoc is one document of a text space.
type TextDoc struct {
	ID     int64
	Fields []Field
}

// TextLoader reads the documents of a space inside a snapshot: all of them
// when ids is nil, else those of ids that exist. The store that owns the
// text (knowledge, listings) provides it.
type TextLoader func(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]TextDoc, error)

// loadedAll reports whether every named space is in the mirror.
func loadedAll[S any](spaces map[string]S, names []string) bool {
	for _, s := range names {
		if _, ok := spaces[s]; !ok {
			return false
		}
	}
	return true
}
