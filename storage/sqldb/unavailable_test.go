package sqldb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A database that cannot be reached is told apart from a statement's own
// error: the first is a 503 with Retry-After, the second is not.
func TestUnavailable(t *testing.T) {
	// A real failed connection: a loopback port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	began := time.Now()
	_, err = Open(context.Background(), "postgres://agentd@"+addr+"/x?sslmode=disable", fstest.MapFS{})
	if err == nil {
		t.Fatal("opened a database on a closed port")
	}
	if !Unavailable(err) {
		t.Errorf("connection refused is not unavailable: %v", err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("a refused connection took %s", d)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{&pgconn.PgError{Code: "25006"}, true}, // read-only: a standby mid-failover
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "40001"}, false},
		{fmt.Errorf("storage: x: %w", &pgconn.PgError{Code: "57P02"}), true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{ErrNotFound, false},
		{errors.New("boom"), false},
		{nil, false},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
