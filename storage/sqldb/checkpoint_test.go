//go:build unix

package sqldb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// Past walCheckpointFrames waiting frames the checkpointer copies them into
// the database file on its own, before the writer's threshold is reached;
// the WAL never grows much past that threshold; Close stops it, twice too.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := Open(ctx, path, fstest.MapFS{"migrations/0001_t.sql": {Data: []byte("CREATE TABLE t (v TEXT);")}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.shm == nil || db.ckpt == nil {
		t.Fatal("no WAL index mapping, no checkpointer")
	}
	body := strings.Repeat("x", 40_000) // ten 4 KB pages a row
	for range 200 {
		if err := db.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", body)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if frames := binary.NativeEndian.Uint32(db.shm.mem[16:20]); frames < 2*walCheckpointFrames || frames >= walAutoCheckpoint {
		t.Fatalf("%d frames in the WAL: the test wants between %d and the writer's %d", frames, 2*walCheckpointFrames, walAutoCheckpoint)
	}
	if !testkit.Within(10*time.Second, func() bool { return db.shm.pendingFrames() < walCheckpointFrames }) {
		t.Fatalf("%d frames still wait", db.shm.pendingFrames())
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if max := int64(walAutoCheckpoint+walCheckpointFrames) * 4120; fi.Size() > max { // 4 KB frames and their headers
		t.Fatalf("WAL of %d bytes, want at most %d", fi.Size(), max)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db.ckpt.stop()
}
