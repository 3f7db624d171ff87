// Package agentstore is the SQL of agents (voice and chat), the workforce
// view of them, and jobs. storage.Stores holds it as its Agents field.
package agentstore

import (
	"database/sql"

	"github.com/agentd/agentd/storage/sqldb"
)

// Agents is the agents store over the shared connection.
type Agents struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the agents store over c.
func New(c *sqldb.DB) *Agents { return &Agents{c: c, r: c.Reader()} }
