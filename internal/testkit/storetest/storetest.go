// Package storetest opens the stores for the tests of the store packages
// under storage/ (their external test packages), on the backend dbtest
// picks: SQLite by default, PostgreSQL when AGENTD_TEST_POSTGRES is set.
package storetest

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
)

// Open opens the stores on path (several calls on one path: several
// processes on one database), closed when the test ends.
func Open(t testing.TB, path string) *storage.Stores {
	t.Helper()
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Fresh opens the stores on a new, empty database.
func Fresh(t testing.TB) *storage.Stores {
	t.Helper()
	return Open(t, dbtest.Path(t, "agentd.db"))
}

// Handles opens n stores on one new database, as n processes on it.
func Handles(t testing.TB, n int) []*storage.Stores {
	t.Helper()
	path := dbtest.Path(t, "agentd.db")
	dbs := make([]*storage.Stores, n)
	for i := range dbs {
		dbs[i] = Open(t, path)
	}
	return dbs
}

// Org creates the organization "acme" through db and returns its id.
func Org(t testing.TB, db *storage.Stores) string {
	t.Helper()
	o, err := db.Orgs.CreateOrg(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// WithOrg opens the stores on a new database holding one organization,
// "acme", and returns its id.
func WithOrg(t testing.TB) (*storage.Stores, string) {
	t.Helper()
	db := Fresh(t)
	return db, Org(t, db)
}

// WithChatAgent opens the stores on a new database holding one
// organization, "acme", with one active chat agent, and returns their ids.
func WithChatAgent(t testing.TB) (db *storage.Stores, orgID, agentID string) {
	t.Helper()
	db, orgID = WithOrg(t)
	a, err := db.Agents.CreateAgent(context.Background(), agentstore.Agent{OrgID: orgID, Name: "a", Type: "chat", Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	return db, orgID, a.ID
}

// Hold runs stmt in a write transaction on db and keeps that transaction
// open, as another process's long one, until end is called or the test
// ends; end commits it. Hold returns once stmt has run.
func Hold(t testing.TB, db *storage.Stores, stmt string) (end func()) {
	t.Helper()
	ran, release, done := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Conn().Write(t.Context(), func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(t.Context(), stmt); err != nil {
				return err
			}
			select { // Write may run this again (a serialization retry)
			case ran <- struct{}{}:
			default:
			}
			<-release
			return nil
		})
	}()
	select {
	case <-ran:
	case err := <-done:
		t.Fatalf("%s: %v", stmt, err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release); <-done }) })
	return func() {
		t.Helper()
		var err error
		once.Do(func() { close(release); err = <-done })
		if err != nil {
			t.Fatal(err)
		}
	}
}
