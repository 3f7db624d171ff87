// Package hookstore is the SQL of webhooks: endpoints, the fan-out of
// logged events to their deliveries, delivery claims, attempts and
// retries. storage.Stores holds it as its Webhooks field.
package hookstore

import (
	"database/sql"

	"github.com/agentd/agentd/storage/sqldb"
)

// EventPing is the type of the event PingWebhook writes for one endpoint.
const EventPing = "ping"

// Webhooks is the webhooks store over the shared connection.
type Webhooks struct {
	c   *sqldb.DB
	r   *sql.DB
	box sqldb.Sealer // webhook secrets at rest (secrets.go)
}

// New returns the webhooks store over c; secrets stay in plain text until
// UseSealer.
func New(c *sqldb.DB) *Webhooks { return &Webhooks{c: c, r: c.Reader(), box: sqldb.PlainText{}} }
