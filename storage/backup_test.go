package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// A backup taken while another connection writes holds every write
// acknowledged before it began and passes integrity_check; restore refuses
// a database that is open elsewhere and replaces one that is not.
func TestBackupUnderWriteLoadAndRestore(t *testing.T) {
	dbtest.SkipOnPostgres(t, "backup and restore copy the SQLite file")
	ctx := context.Background()
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	db, err := Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()

	var mu sync.Mutex
	var acked []string // organization names whose creation returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("org-%05d", i)
			if _, err := db.Orgs.CreateOrg(ctx, name); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			mu.Lock()
			acked = append(acked, name)
			mu.Unlock()
		}
	}()
	waitAcked := func(n int) {
		for {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got >= n {
				return
			}
		}
	}
	waitAcked(200)
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	bak := filepath.Join(dir, "snap.db")
	if err := Backup(ctx, live, bak); err != nil {
		t.Fatalf("backup: %v", err)
	}
	waitAcked(len(before) + 50) // the writer went on during and after the backup
	close(stop)
	wg.Wait()

	if err := Backup(ctx, live, bak); err == nil {
		t.Fatal("backup over an existing file succeeded")
	}
	if err := Restore(ctx, bak, live); !errors.Is(err, ErrInUse) {
		t.Fatalf("restore over an open database: err %v, want ErrInUse", err)
	}

	fresh := filepath.Join(dir, "fresh.db")
	if err := Restore(ctx, bak, fresh); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if err := CheckFile(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	orgs, err := r.Orgs.ListOrgs(ctx)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, o := range orgs {
		have[o.Name] = true
	}
	for _, n := range before {
		if !have[n] {
			t.Fatalf("restored database lacks %s, acknowledged before the backup began (%d of %d restored)", n, len(orgs), len(before))
		}
	}

	// With the server gone, restore replaces the live file: the writes
	// made after the backup are gone, the file is whole.
	db.Close()
	if err := Restore(ctx, bak, live); err != nil {
		t.Fatalf("restore over a closed database: %v", err)
	}
	db, err = Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	after, err := db.Orgs.ListOrgs(ctx)
	if err != nil || len(after) != len(orgs) {
		t.Fatalf("after restore: %d orgs (%v), want %d", len(after), err, len(orgs))
	}
	if s, err := db.IntegrityCheck(ctx); err != nil || s != "ok" {
		t.Fatalf("integrity after restore: %q %v", s, err)
	}
}

// A damaged backup is refused before anything is overwritten.
func TestRestoreRefusesDamagedBackup(t *testing.T) {
	dbtest.SkipOnPostgres(t, "backup and restore copy the SQLite file")
	ctx := context.Background()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.db")
	if err := os.WriteFile(bad, []byte("not a database, just some bytes that are long enough to matter"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "t.db")
	if err := Restore(ctx, bad, target); err == nil {
		t.Fatal("restore of a damaged file succeeded")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("target touched: %v", err)
	}
}
