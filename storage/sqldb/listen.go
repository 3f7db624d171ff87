package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The channels agentd notifies on. On PostgreSQL the triggers of migration
// 0026 send them inside the writing transaction (so only on commit, once
// per transaction: PostgreSQL folds identical notifications); a commit in
// this process also wakes its own waiters through Notify.
const (
	ChanAuth       = "agentd_auth"       // a user, key or organization changed (the auth epoch moved)
	ChanCalls      = "agentd_calls"      // a call was created, rescheduled or queued
	ChanEvents     = "agentd_events"     // events were logged
	ChanDeliveries = "agentd_deliveries" // webhook deliveries were queued or set for a retry
	ChanKB         = "agentd_kb"         // knowledge sources were queued
	ChanAnalyses   = "agentd_analyses"   // post-call analyses were queued or set for a retry
)

var channels = []string{ChanAuth, ChanCalls, ChanEvents, ChanDeliveries, ChanKB, ChanAnalyses}

// WakePoll is how long an idle worker sleeps between safety polls while
// notifications reach it from every process (PostgreSQL with the listener
// up): they are only there for a notification lost with its connection.
const WakePoll = 30 * time.Second

// Listener wakes this process's waiters on agentd's channels. On
// PostgreSQL it holds one dedicated connection (not from the pools) that
// LISTENs on every channel and reconnects with backoff; on SQLite it has no
// connection and only the commits of this process (Notify) wake waiters.
//
// Each channel has a version that moves at every notification and at every
// change of the connection (up or down): a cache filed under a version is
// good while Version returns the same one with live true. Waiters of every
// channel are woken at each change of the connection too, since a
// notification may have been missed while it was down.
type Listener struct {
	connect func(context.Context) (*pgx.Conn, error) // nil: in-process only

	mu    sync.Mutex
	sigs  map[string]*broadcast // any notification
	local map[string]*broadcast // commits of this process only
	vers  map[string]uint64
	up    bool

	pid     atomic.Uint32 // backend of the listening connection (0 while down)
	stop    context.CancelFunc
	done    chan struct{}
	started sync.Once
}

func newListener(connect func(context.Context) (*pgx.Conn, error)) *Listener {
	return &Listener{connect: connect, sigs: map[string]*broadcast{}, local: map[string]*broadcast{},
		vers: map[string]uint64{}, done: make(chan struct{})}
}

// start runs the connection loop once, on first use: a CLI command that
// never waits nor authenticates never opens it.
func (l *Listener) start() {
	l.started.Do(func() {
		if l.connect == nil {
			close(l.done)
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		l.mu.Lock()
		l.stop = cancel
		l.mu.Unlock()
		go l.run(ctx)
	})
}

// close stops the connection loop and waits for it.
func (l *Listener) close() {
	l.started.Do(func() { close(l.done) }) // never started: nothing runs
	l.mu.Lock()
	stop := l.stop
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	<-l.done
}

// Disable turns the listener off for good (Close does too): waiters wake
// only on this process's commits, workers poll as on SQLite and the auth
// epoch is read every time. For tests in a synctest bubble, whose fake
// clock stands still while one of its goroutines waits on the network.
func (l *Listener) Disable() { l.close() }

// Wait returns a channel closed at the next notification on channel (or
// change of the connection). Take it before reading what it guards, so a
// commit in between is never missed.
func (l *Listener) Wait(channel string) <-chan struct{} {
	l.start()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.sigs[channel]
	if b == nil {
		b = &broadcast{}
		l.sigs[channel] = b
	}
	return b.wait()
}

// WaitLocal returns a channel closed at the next commit of this process
// that notifies channel (see DB.Notify).
func (l *Listener) WaitLocal(channel string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.local[channel]
	if b == nil {
		b = &broadcast{}
		l.local[channel] = b
	}
	return b.wait()
}

// committed is notify for the channels of a commit of this process.
func (l *Listener) committed(chs ...string) {
	l.notify(chs...)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range chs {
		if b := l.local[ch]; b != nil {
			b.fire()
		}
	}
}

// Version is the channel's version and whether notifications from every
// process reach this one now (false on SQLite, and on PostgreSQL while the
// connection is down or not yet up).
func (l *Listener) Version(channel string) (v uint64, live bool) {
	l.start()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.vers[channel], l.up
}

// Up reports whether the listening connection is up.
func (l *Listener) Up() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

// BackendPID is the PostgreSQL backend of the listening connection, 0 while
// it is down (tests end it with pg_terminate_backend).
func (l *Listener) BackendPID() uint32 { return l.pid.Load() }

// notify moves the channels' versions and wakes their waiters.
func (l *Listener) notify(chs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ch := range chs {
		l.vers[ch]++
		if b := l.sigs[ch]; b != nil {
			b.fire()
		}
	}
}

// setUp records a change of the connection: every version moves and every
// waiter wakes (a notification may have been missed meanwhile).
func (l *Listener) setUp(up bool) {
	l.mu.Lock()
	changed := l.up != up
	l.up = up
	l.mu.Unlock()
	if changed {
		l.notify(channels...)
	}
}

// run keeps the listening connection: connect, LISTEN, wait for
// notifications; on any failure mark it down and retry, 50 ms after the
// first failure, doubling up to a second, so a returning server is heard
// within about a second.
func (l *Listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		started := time.Now()
		l.listen(ctx)
		l.pid.Store(0)
		l.setUp(false)
		if time.Since(started) > 10*time.Second {
			backoff = 50 * time.Millisecond // it had been up: a fresh failure
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		backoff = min(2*backoff, time.Second)
	}
}

// listen runs one connection until it fails or ctx ends.
func (l *Listener) listen(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := l.connect(cctx)
	cancel()
	if err != nil {
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(cctx)
		cancel()
	}()
	q := "LISTEN " + strings.Join(channels, "; LISTEN ")
	if _, err := conn.Exec(ctx, q); err != nil {
		return
	}
	l.pid.Store(conn.PgConn().PID())
	l.setUp(true)
	for {
		// A silent minute is checked with a ping: a server gone without
		// closing the socket would otherwise keep the caches forever.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			l.notify(n.Channel)
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		default:
			return
		}
	}
}

// Listener is this database's listener (see Listener).
func (db *DB) Listener() *Listener { return db.lis }

// Wake returns a channel closed at the next notification on channel: from
// any process while the listener is up (PostgreSQL), from this process's
// commits always. See Listener.Wait.
func (db *DB) Wake(channel string) <-chan struct{} { return db.lis.Wait(channel) }

// IdlePoll is how long a worker waiting on Wake should sleep at most:
// WakePoll while notifications come from every process, else poll (SQLite,
// whose other processes are found by polling as before, or PostgreSQL with
// the listener down).
func (db *DB) IdlePoll(poll time.Duration) time.Duration {
	if _, live := db.lis.Version(ChanCalls); live {
		return max(poll, WakePoll)
	}
	return poll
}

// Notify wakes this process's waiters on the channels once tx commits (see
// Write). Other processes are told by the triggers of migration 0026, in
// the same transaction.
func (db *DB) Notify(tx *sql.Tx, chs ...string) {
	v, _ := db.txNotes.LoadOrStore(tx, &txNote{})
	n := v.(*txNote)
	n.mu.Lock()
	for _, ch := range chs {
		if !strings.Contains(n.chs, "|"+ch+"|") {
			n.chs += "|" + ch + "|"
		}
	}
	n.mu.Unlock()
}

// txNote is the channels a transaction notifies, as |a||b|.
type txNote struct {
	mu  sync.Mutex
	chs string
}

// takeNotes removes tx's note and returns its channels.
func (db *DB) takeNotes(tx *sql.Tx) []string {
	v, ok := db.txNotes.LoadAndDelete(tx)
	if !ok {
		return nil
	}
	n := v.(*txNote)
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.FieldsFunc(n.chs, func(r rune) bool { return r == '|' })
}
