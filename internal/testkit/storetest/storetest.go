// Package storetest opens the stores for the tests of the store packages
// under storage/ (their external test packages), on the backend dbtest
// picks: SQLite by default, PostgreSQL when AGENTD_TEST_POSTGRES is set.
package storetest

import (
	"context"
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
