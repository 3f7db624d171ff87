package callstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/callstore"
)

// The claim must read the queued calls in claim order from an index and
// stop at the first it may take: a sort in its plan makes every claim cost
// as much as the calls that tie on priority and due time (a whole batch).
func TestClaimReadsQueueInOrder(t *testing.T) {
	ctx := context.Background()
	db := storetest.Fresh(t)
	pg := db.Postgres()
	q := callstore.ClaimSQL(pg)
	args := []any{"tok", "w", int64(1), int64(1), "sim", int64(1), int64(1)}
	explain := "EXPLAIN QUERY PLAN "
	if pg {
		explain = "EXPLAIN (COSTS OFF) "
	}
	// The claim's own transaction, on a table whose statistics say it is
	// empty: the case (a burst of calls before the next ANALYZE) where
	// PostgreSQL's planner would sort.
	tx, err := db.Conn().Reader().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if pg {
		if _, err := tx.ExecContext(ctx, "ANALYZE calls"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, callstore.ClaimPlanPG); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := tx.QueryContext(ctx, explain+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, strings.TrimSpace(string(toString(vals[len(vals)-1]))))
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "calls_queue") {
		t.Errorf("the claim does not read the calls_queue index:\n%s", text)
	}
	for _, bad := range []string{"TEMP B-TREE FOR ORDER BY", "Sort"} {
		if strings.Contains(text, bad) {
			t.Errorf("the claim sorts (%s):\n%s", bad, text)
		}
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return ""
}
