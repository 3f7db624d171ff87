package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/testbin"
)

// Backup and restore copy SQLite files: given a PostgreSQL URL they say so,
// without echoing the URL (it may hold a password) or touching anything.
func TestBackupRefusesPostgres(t *testing.T) {
	dir := t.TempDir()
	url := "postgres://agentd:s3cret@127.0.0.1:1/agentd"
	for _, cmd := range []string{"backup", "restore"} {
		_, errOut, err := testbin.Run(agentdBin, dir, nil, "--db", url, cmd, filepath.Join(dir, "copy.db"))
		if err == nil || !strings.Contains(errOut, "pg_dump") || strings.Contains(errOut, "s3cret") {
			t.Fatalf("%s on a PostgreSQL URL: %v %q", cmd, err, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "copy.db")); !os.IsNotExist(err) {
		t.Fatalf("a file was written: %v", err)
	}
}
