package cmd

import (
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/dbtest"
)

// The README's continuous replication, for real: litestream replicates a
// serving agentd's database to a file replica, and a restore from the
// replica holds exactly the live rows and passes integrity_check. Skipped
// when litestream is not installed (.ci/run installs it with go install).
func TestLitestreamReplication(t *testing.T) {
	dbtest.SkipOnPostgres(t, "litestream replicates the SQLite file")
	bin, err := exec.LookPath("litestream")
	if err != nil {
		t.Skip("litestream not installed: go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18")
	}
	dir := t.TempDir()
	live := filepath.Join(dir, "agentd.db")
	replica := "file://" + filepath.Join(dir, "replica")
	s := startServe(t, dir, "--db", live)

	ls := exec.Command(bin, "replicate", live, replica)
	var lsLog strings.Builder
	ls.Stdout, ls.Stderr = &lsLog, &lsLog
	if err := ls.Start(); err != nil {
		t.Fatal(err)
	}
	lsDone := make(chan struct{})
	go func() { ls.Wait(); close(lsDone) }()
	t.Cleanup(func() {
		ls.Process.Kill() // by PID
		<-lsDone
		if t.Failed() {
			t.Logf("litestream:\n%s", lsLog.String())
		}
	})

	for i := 0; i < 50; i++ {
		req, _ := http.NewRequest("POST", s.url+"/api/v1/agents",
			strings.NewReader(`{"name":"replicated-`+strconv.Itoa(i)+`","type":"chat"}`))
		req.Header.Set("x-api-key", s.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("create agent %d: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
	want := agentRows(t, live)

	out := filepath.Join(dir, "restored.db")
	var got []string
	var restoreErr error
	var restoreOut []byte
	if !testkit.WithinEvery(30*time.Second, 500*time.Millisecond, func() bool { // a restore a look: seldom
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(out + suffix)
		}
		if restoreOut, restoreErr = exec.Command(bin, "restore", "-o", out, replica).CombinedOutput(); restoreErr != nil {
			return false
		}
		got = agentRows(t, out)
		return slices.Equal(got, want)
	}) {
		if restoreErr != nil {
			t.Fatalf("litestream restore: %v\n%s", restoreErr, restoreOut)
		}
		t.Fatalf("the replica never caught up: %d rows restored, %d live", len(got), len(want))
	}
	if _, errOut, err := agentd(t, dir, "--db", out, "doctor", "--json"); err != nil {
		t.Fatalf("doctor on the restored database: %v %s", err, errOut)
	}
	// While litestream holds the live database open, restore refuses it.
	s.stop(t)
	if _, errOut, err := agentd(t, dir, "--db", live, "restore", out); err == nil || !strings.Contains(errOut, "open in another process") {
		t.Fatalf("restore under litestream: %v %q", err, errOut)
	}
}

// agentRows is every agent of the file as "id name", sorted, after an
// integrity check.
func agentRows(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("%s: integrity_check %q %v", path, check, err)
	}
	rows, err := db.Query("SELECT id, name FROM agents ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, name string
		rows.Scan(&id, &name)
		out = append(out, id+" "+name)
	}
	return out
}
