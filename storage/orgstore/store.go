// Package orgstore is the SQL of organizations, their users, API keys,
// dashboard sessions and setup tokens: what authentication reads.
// storage.Stores holds it as its Orgs field.
package orgstore

import (
	"database/sql"
	"sync"

	"github.com/agentd/agentd/storage/sqldb"
)

// Orgs is the organizations store over the shared connection.
type Orgs struct {
	c *sqldb.DB
	r *sql.DB

	keyListMu    sync.Mutex
	keyListEpoch int64
	keyLists     map[string][]APIKey // by organization, valid for keyListEpoch
}

// New returns the organizations store over c.
func New(c *sqldb.DB) *Orgs { return &Orgs{c: c, r: c.Reader()} }
