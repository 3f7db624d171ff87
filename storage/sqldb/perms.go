package sqldb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// FileMode is the mode of every file agentd writes that holds data: the
// database, its WAL and shared memory, backups, the secret key file. They
// hold phone numbers, transcripts and secrets, so only the owner reads them.
const FileMode = 0o600

// ownerOnly creates the SQLite file at path 0600 when it does not exist
// (SQLite gives its -wal and -shm files the mode of the database), and
// tightens the database and its companions when an older version left them
// readable by others.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&^0o077); err != nil {
			return fmt.Errorf("storage: restrict %s to its owner: %w", p, err)
		}
	}
	return nil
}
