package search

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
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

// mirror is the catch-up both indexes share: spaces of kind S, loaded
// whole or updated item by item (items of kind I) from the change log.
type mirror[S, I any] struct {
	log       ChangeLog
	loadSpace func(ctx context.Context, tx *sql.Tx, space string) (S, error)
	readItems func(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]I, error)
	apply     func(sp S, changed []int64, items []I) // under mu

	syncMu sync.Mutex // one catch-up at a time
	mark   Mark       // the database's state at the last catch-up
	mu     sync.RWMutex
	last   int64
	spaces map[string]S
}

// warm loads every space whose name starts with prefix.
func (m *mirror[S, I]) warm(ctx context.Context, prefix string) error {
	names, err := m.log.Spaces(ctx, prefix)
	if err != nil {
		return err
	}
	return m.sync(ctx, names...)
}

// sync replays the change log since the last catch-up onto the loaded
// spaces and loads the named spaces not loaded yet, all from one read
// snapshot.
func (m *mirror[S, I]) sync(ctx context.Context, load ...string) error {
	m.syncMu.Lock()
	defer m.syncMu.Unlock()
	mark := m.log.Mark(ctx)
	if m.mark.same(mark) && m.loadedAll(load) {
		return nil // nothing committed since the last catch-up
	}
	var (
		fresh   map[string]S
		changed map[string][]int64
		updates map[string][]I
		maxSeq  int64
	)
	have := func(s string) bool { _, ok := m.spaces[s]; return ok }
	err := m.log.Changes(ctx, m.last, have, len(m.spaces) > 0, load, func(tx *sql.Tx, d Delta) error {
		if d.ReloadAll { // the log was pruned past us: start over
			for s := range m.spaces {
				d.Reload[s] = true
			}
		}
		changed, maxSeq = d.Changed, d.MaxSeq
		fresh = map[string]S{}
		for s := range d.Reload {
			sp, err := m.loadSpace(ctx, tx, s)
			if err != nil {
				return err
			}
			fresh[s] = sp
			delete(changed, s)
		}
		updates = map[string][]I{}
		for s, ids := range changed {
			items, err := m.readItems(ctx, tx, s, ids)
			if err != nil {
				return err
			}
			updates[s] = items
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mirror sync: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for s, sp := range fresh {
		m.spaces[s] = sp
	}
	for s, ids := range changed {
		m.apply(m.spaces[s], ids, updates[s])
	}
	m.last = maxSeq
	m.mark = mark
	return nil
}

// loadedAll reports whether every named space is in the mirror.
func (m *mirror[S, I]) loadedAll(names []string) bool {
	for _, s := range names {
		if _, ok := m.spaces[s]; !ok {
			return false
		}
	}
	return true
}
