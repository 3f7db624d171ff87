// Package storage opens agentd's database (one SQLite file, or PostgreSQL)
// with its embedded migrations and hands out one store per domain. All SQL
// of the project lives below it, each domain's in its own package
// (storage/callstore, storage/kbstore, ...), over the connection they share
// (storage/sqldb). This package holds no query: Open, the Stores struct,
// and the whole-database operations (backup, restore, inspect, copy).
package storage

import (
	"context"
	"database/sql"
	"embed"
	"time"

	"github.com/agentd/agentd/internal/secretbox"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/analysisstore"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/agentd/agentd/storage/convstore"
	"github.com/agentd/agentd/storage/dashstore"
	"github.com/agentd/agentd/storage/eventstore"
	"github.com/agentd/agentd/storage/hookstore"
	"github.com/agentd/agentd/storage/kbstore"
	"github.com/agentd/agentd/storage/listingstore"
	"github.com/agentd/agentd/storage/orgstore"
	"github.com/agentd/agentd/storage/sqldb"
	"github.com/agentd/agentd/storage/vectorstore"
	"github.com/agentd/agentd/storage/widgetstore"
)

//go:embed migrations/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// Sentinel errors returned (wrapped) by every store; app maps them to HTTP
// statuses once.
var (
	ErrNotFound = sqldb.ErrNotFound
	ErrConflict = sqldb.ErrConflict
)

// Unavailable reports whether err says the database cannot be reached now
// (restart, failover, network) rather than that the request was wrong: app
// answers it 503 with Retry-After.
func Unavailable(err error) bool { return sqldb.Unavailable(err) }

// Stores are the database's stores, one per domain, over one connection
// (one writer with immediate transactions and a pool of readers on SQLite;
// a pool on PostgreSQL). A feature takes the stores it uses.
type Stores struct {
	Calls         *callstore.Calls
	Agents        *agentstore.Agents
	Orgs          *orgstore.Orgs
	Webhooks      *hookstore.Webhooks
	Dashboard     *dashstore.Dashboard
	KB            *kbstore.Knowledge
	Listings      *listingstore.Listings
	Events        *eventstore.Events
	Vectors       *vectorstore.Vectors
	Conversations *convstore.Store
	// Widget is the chat widget's store (signing key, daily counts).
	Widget *widgetstore.Store
	// Analyses is post-call analysis (plans, queue and results).
	Analyses *analysisstore.Store
	// Secrets seals secrets kept inside a feature's values (the header
	// values of agents' mcp tools): the secret key's box, or plain text.
	Secrets sqldb.Sealer

	c *sqldb.DB
}

// Open opens (creating if needed) the database at path and applies every
// pending migration. Several processes may open the same file at once (the
// CLI while the server runs): migrations and writes are serialised by SQLite.
func Open(ctx context.Context, path string) (*Stores, error) {
	c, err := sqldb.Open(ctx, path, migrationFS)
	if err != nil {
		return nil, err
	}
	vec := vectorstore.New(c)
	db := &Stores{c: c, Calls: callstore.New(c), Agents: agentstore.New(c), Orgs: orgstore.New(c),
		Webhooks: hookstore.New(c), Dashboard: dashstore.New(c), KB: kbstore.New(c),
		Listings: listingstore.New(c, vec), Events: eventstore.New(c), Vectors: vec,
		Conversations: convstore.New(c), Widget: widgetstore.New(c), Analyses: analysisstore.New(c)}
	// Secrets at rest: the key is kept outside the database (secretbox).
	box, err := secretbox.Load(path, c.Postgres())
	if err != nil {
		c.Close()
		return nil, err
	}
	db.Secrets = sqldb.PlainText{}
	if box != nil {
		db.Webhooks.UseSealer(box)
		db.Conversations.UseSealer(box)
		db.Secrets = box
	}
	return db, nil
}

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool { return sqldb.IsPostgresURL(s) }

// Postgres reports whether the stores run on PostgreSQL.
func (db *Stores) Postgres() bool { return db.c.Postgres() }

// Path is the database file (or PostgreSQL URL) the stores were opened on.
func (db *Stores) Path() string { return db.c.Path() }

// Conn is the connection every store shares: for whole-database work
// (Copy) and for tests that read raw rows or query plans.
func (db *Stores) Conn() *sqldb.DB { return db.c }

// Close closes every connection.
func (db *Stores) Close() error { return db.c.Close() }

// IntegrityCheck runs PRAGMA integrity_check and returns its first line
// ("ok" for a healthy file).
func (db *Stores) IntegrityCheck(ctx context.Context) (string, error) {
	return db.c.IntegrityCheck(ctx)
}

// AuthEpoch returns a number that changes whenever a user, key or
// organization changes, in this process or another one on the same file.
func (db *Stores) AuthEpoch(ctx context.Context) (int64, error) { return db.c.AuthEpoch(ctx) }

// PoolStats are the connection pool statistics of the writer (one
// connection) and of the reader pool, by name: "writer", "reader".
func (db *Stores) PoolStats() map[string]sql.DBStats { return db.c.PoolStats() }

// ErrInUse is returned by Restore when another connection has the target
// database open.
var ErrInUse = sqldb.ErrInUse

// Backup writes a consistent, checked copy of the database at src to dst
// (which must not exist), also while a server writes to src.
func Backup(ctx context.Context, src, dst string) error { return sqldb.Backup(ctx, src, dst) }

// CheckFile runs the integrity check on the database file at path, read only.
func CheckFile(ctx context.Context, path string) error { return sqldb.CheckFile(ctx, path) }

// Restore replaces the database at dst with the backup at src; ErrInUse
// when another connection has dst open.
func Restore(ctx context.Context, src, dst string) error { return sqldb.Restore(ctx, src, dst) }

// InspectFile reads the FileState of the database at path, creating
// nothing and applying no migration.
func InspectFile(ctx context.Context, path string) (sqldb.FileState, error) {
	return sqldb.InspectFile(ctx, path, migrationFS)
}

// The channels of the wake-ups (see sqldb.Listener): a worker waits on
// Wake(channel) besides its timer.
const (
	ChanCalls      = sqldb.ChanCalls
	ChanEvents     = sqldb.ChanEvents
	ChanDeliveries = sqldb.ChanDeliveries
	ChanKB         = sqldb.ChanKB
	ChanAnalyses   = sqldb.ChanAnalyses
)

// Wake returns a channel closed at the next notification on channel: from
// any process on PostgreSQL while the listener is up, from this process's
// own commits otherwise. Take it before reading what it guards.
func (db *Stores) Wake(channel string) <-chan struct{} { return db.c.Wake(channel) }

// IdlePoll is how long an idle worker may sleep between safety polls:
// sqldb.WakePoll (30 s) while notifications come from every process, else
// poll (SQLite; PostgreSQL with the listener down).
func (db *Stores) IdlePoll(poll time.Duration) time.Duration { return db.c.IdlePoll(poll) }

// Waker is one channel's wake-ups, for a feature's worker that waits on
// it without holding the whole set of stores.
type Waker struct {
	s       *Stores
	channel string
}

// Waker returns the wake-ups of channel.
func (db *Stores) Waker(channel string) Waker { return Waker{db, channel} }

// Wake is Stores.Wake on the waker's channel.
func (w Waker) Wake() <-chan struct{} { return w.s.Wake(w.channel) }

// IdlePoll is Stores.IdlePoll.
func (w Waker) IdlePoll(poll time.Duration) time.Duration { return w.s.IdlePoll(poll) }
