package vectorstore_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// The vector change log's seq follows commit order on PostgreSQL, which
// the search mirrors rely on (they follow it by seq): a transaction that
// logs first but commits last gets the later seq, and a mirror that read
// the log between the two commits misses nothing by reading on from its
// mark. The order is taken at commit, so the first transaction holds no
// lock that the second waits on.
func TestVectorLogSeqFollowsCommitOrder(t *testing.T) {
	dbtest.SkipOnSQLite(t, "SQLite's single writer commits in seq order")
	ctx := context.Background()
	h := storetest.Handles(t, 2)
	a, b := h[0], h[1]
	end := storetest.Hold(t, a, "INSERT INTO vector_log (space, item_id) VALUES ('s', 1)")
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := b.Conn().Write(wctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(wctx, "INSERT INTO vector_log (space, item_id) VALUES ('s', 2)")
		return err
	}); err != nil {
		t.Fatalf("the second log write, while the first's transaction is open: %v (it waited on the first)", err)
	}
	var mark int64
	if err := b.Conn().Reader().QueryRowContext(ctx, "SELECT max(seq) FROM vector_log").Scan(&mark); err != nil {
		t.Fatal(err)
	}
	end()
	var items []int64
	rows, err := b.Conn().Reader().QueryContext(ctx, "SELECT item_id FROM vector_log WHERE seq > ? ORDER BY seq", mark)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		items = append(items, id)
	}
	if len(items) != 1 || items[0] != 1 {
		t.Fatalf("read on from the mark %d taken between the commits: items %v, want [1] (the late commit)", mark, items)
	}
}
