//go:build unix

package sqldb

import (
	"encoding/binary"
	"os"
	"syscall"
)

// shmWatch maps the first page of the WAL index (the -shm file) read-only.
// SQLite rewrites the index header at its start on every commit by any
// process, so comparing the header with the last one seen says, in
// nanoseconds, whether anything was committed since.
type shmWatch struct {
	mem []byte
}

func openShmWatch(dbPath string) *shmWatch {
	f, err := os.Open(dbPath + "-shm")
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 4096 { // never map past the end of the file
		return nil
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return &shmWatch{mem: mem}
}

// header copies the first wal-index header (48 bytes).
func (w *shmWatch) header() (h [48]byte) {
	copy(h[:], w.mem[:48])
	return h
}

// pendingFrames is how many committed WAL frames are not yet copied into
// the database file: mxFrame of the first index header less nBackfill of
// the checkpoint information after the two header copies.
func (w *shmWatch) pendingFrames() uint32 {
	mx, done := binary.NativeEndian.Uint32(w.mem[16:20]), binary.NativeEndian.Uint32(w.mem[96:100])
	if done > mx {
		return 0
	}
	return mx - done
}

func (w *shmWatch) close() {
	syscall.Munmap(w.mem)
}
