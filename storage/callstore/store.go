// Package callstore is the SQL of calls: outbound calls and their queue
// (claims, leases, attempts, retries), inbound calls, telephony results,
// batches, the do-not-call list and each organization's calling rules.
// Every transition writes its call.* and batch.completed events in its own
// transaction. storage.Stores holds it as its Calls field.
package callstore

import (
	"database/sql"
	"sync"

	"github.com/agentd/agentd/storage/sqldb"
)

// Calls is the calls store over the shared connection.
type Calls struct {
	c *sqldb.DB
	r *sql.DB
	// paced holds the trunks whose pace held this process's last claim
	// back (PostgreSQL's claim reads their budget before taking a call).
	paced sync.Map
}

// New returns the calls store over c.
func New(c *sqldb.DB) *Calls { return &Calls{c: c, r: c.Reader()} }
