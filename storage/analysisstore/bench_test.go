package analysisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage/callstore"
)

// BenchmarkCallResultQueue is the cost of recording a call's transcript
// with and without an analysis plan on its agent: the difference is the
// analysis queue's overhead on a call's end (one INSERT ... SELECT in the
// same transaction).
func BenchmarkCallResultQueue(b *testing.B) {
	for _, plan := range []bool{false, true} {
		b.Run(fmt.Sprintf("plan=%v", plan), func(b *testing.B) {
			ctx := context.Background()
			db, org := storetest.WithOrg(b)
			_, ids := agentWithCalls(b, db, org, b.N, plan)
			tr := json.RawMessage(`[{"role":"agent","text":"Hello, this is Ada.","at":"2026-06-10T14:00:01.000Z"},{"role":"user","text":"Hi.","at":"2026-06-10T14:00:02.000Z"}]`)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := db.Calls.SaveCallResult(ctx, org, callstore.CallResult{CallID: ids[i], Transcript: tr}, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if plan {
				if a, err := db.Analyses.Get(ctx, org, "call", ids[b.N-1]); err != nil || a.Status != "pending" {
					b.Fatalf("queued: %+v %v", a, err)
				}
			}
		})
	}
}
