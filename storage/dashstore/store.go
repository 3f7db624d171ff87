// Package dashstore is the SQL of the dashboard's aggregates (call
// overview, calls per hour, batch progress, knowledge backlog, listing
// categories) and of its seeded history.
// storage.Stores holds it as its Dashboard field.
package dashstore

import (
	"database/sql"

	"github.com/agentd/agentd/storage/sqldb"
)

// Dashboard is the dashboard store over the shared connection.
type Dashboard struct {
	c *sqldb.DB
	r *sql.DB
}

// New returns the dashboard store over c.
func New(c *sqldb.DB) *Dashboard { return &Dashboard{c: c, r: c.Reader()} }
