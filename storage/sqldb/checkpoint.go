package sqldb

import (
	"context"
	"sync"
)

// WAL checkpoints: SQLite copies committed WAL frames back into the
// database file inside the commit that takes the WAL past its
// auto-checkpoint threshold, so the single writer paid for it; at ingest
// rates that was a fifth of the writer's time (issue 16). A checkpointer
// goroutine does the copying instead, on a reader connection, once
// walCheckpointFrames frames wait: a PASSIVE checkpoint blocks neither the
// writer nor readers. The writer keeps a threshold of its own, higher: the
// WAL starts over from its beginning only after a checkpoint that copied
// every frame, which one running beside a stream of writes rarely does, so
// the writer's checkpoint still closes each 16 MB of WAL, with little left
// to copy. Without the WAL index mapping (other platforms) the writer does
// it all, every walAutoCheckpoint frames.
const (
	walCheckpointFrames = 1000 // SQLite's default auto-checkpoint
	walAutoCheckpoint   = 4000 // 16 MB of 4 KB pages
)

// checkpointer is the goroutine's handle: writes nudge it; stop waits for
// it to end.
type checkpointer struct {
	nudge, done, exited chan struct{}
	once                sync.Once
}

// startCheckpointer runs the checkpointer of db (nil when the WAL index
// cannot be read: the writer checkpoints then).
func startCheckpointer(db *DB) *checkpointer {
	if db.shm == nil {
		return nil
	}
	c := &checkpointer{nudge: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(c.exited)
		for {
			select {
			case <-c.done:
				return
			case <-c.nudge:
			}
			if db.shm.pendingFrames() >= walCheckpointFrames {
				db.r.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)") // a failed one is retried on the next nudge
			}
		}
	}()
	return c
}

// poke tells the checkpointer that a transaction committed.
func (c *checkpointer) poke() {
	if c == nil {
		return
	}
	select {
	case c.nudge <- struct{}{}:
	default:
	}
}

// stop ends the checkpointer and waits for it (again: at once).
func (c *checkpointer) stop() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.done) })
	<-c.exited
}
