package callstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/storage/callstore"
	"github.com/jackc/pgx/v5"
)

// New calls scheduled a minute or more ahead wake no process (the
// scheduler's 30 s poll sees them in time); a call due sooner, or queued,
// still notifies agentd_calls.
func TestNewCallsNotifyOnlyWhenDueSoon(t *testing.T) {
	dbtest.SkipOnSQLite(t, "NOTIFY is PostgreSQL's")
	ctx := context.Background()
	q := newQueueDB(t)
	conn, err := pgx.Connect(ctx, q.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN agentd_calls"); err != nil {
		t.Fatal(err)
	}
	notified := func() bool {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := conn.WaitForNotification(wctx)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		return err == nil
	}
	for _, c := range []struct {
		name   string
		status string
		due    time.Duration
		want   bool
	}{
		{"scheduled for tomorrow", callstore.CallScheduled, 24 * time.Hour, false},
		{"scheduled in two minutes", callstore.CallScheduled, 2 * time.Minute, false},
		{"scheduled in ten seconds", callstore.CallScheduled, 10 * time.Second, true},
		{"queued", callstore.CallQueued, 0, true},
	} {
		q.now = time.Now()
		q.add(c.status, c.due, 5, 5)
		if got := notified(); got != c.want {
			t.Errorf("%s: notified %v, want %v", c.name, got, c.want)
		}
	}
}
