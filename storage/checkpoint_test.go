//go:build unix

package storage

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Past walCheckpointFrames waiting frames the checkpointer copies them into
// the database file on its own, before the writer's threshold is reached;
// the WAL never grows much past that threshold; Close stops it, twice too.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	k := newKBDB(t)
	if k.shm == nil {
		t.Fatal("no WAL index mapping")
	}
	body := strings.Repeat("x", 40_000) // ten 4 KB pages a source
	for i := range 150 {
		k.upsert(fmt.Sprint(i), fmt.Sprint(i, body))
	}
	if frames := binary.NativeEndian.Uint32(k.shm.mem[16:20]); frames < 2*walCheckpointFrames || frames >= walAutoCheckpoint {
		t.Fatalf("%d frames in the WAL: the test wants between %d and the writer's %d", frames, 2*walCheckpointFrames, walAutoCheckpoint)
	}
	deadline := time.Now().Add(10 * time.Second)
	for k.shm.pendingFrames() >= walCheckpointFrames {
		if time.Now().After(deadline) {
			t.Fatalf("%d frames still wait", k.shm.pendingFrames())
		}
		time.Sleep(10 * time.Millisecond)
	}
	fi, err := os.Stat(k.path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if max := int64(walAutoCheckpoint+walCheckpointFrames) * 4120; fi.Size() > max { // 4 KB frames and their headers
		t.Fatalf("WAL of %d bytes, want at most %d", fi.Size(), max)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	k.Close()
}
