//go:build unix

package sqldb

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
)

// Close while searches and auth checks still read the WAL index: they see
// it closed and fall back (a crash before: Close unmapped the page under a
// reader, seen as SIGSEGV in CI).
func TestCloseUnderWALHeaderReaders(t *testing.T) {
	for range 20 {
		db, err := Open(context.Background(), filepath.Join(t.TempDir(), "t.db"),
			fstest.MapFS{"migrations/0001_t.sql": {Data: []byte("CREATE TABLE t (v TEXT);")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := db.WALHeader(); !ok {
			t.Skip("no WAL index mapping here")
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					db.WALHeader()
					db.shm.pendingFrames()
				}
			})
		}
		db.Close()
		if _, ok := db.WALHeader(); ok {
			t.Fatal("header read after Close")
		}
		close(stop)
		wg.Wait()
	}
}
