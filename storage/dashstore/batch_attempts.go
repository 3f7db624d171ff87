package dashstore

import (
	"context"
	"fmt"
	"time"

	"github.com/agentd/agentd/storage/sqldb"
)

// attemptSteps are the bucket sizes a batch's attempts chart may use, the
// smallest giving at most maxAttemptBuckets bars wins: minutes for a short
// campaign, hours or days for a long one.
var attemptSteps = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour,
	3 * time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// maxAttemptBuckets keeps the bars wide enough to read at 360 px.
const maxAttemptBuckets = 48

// AttemptBuckets is a batch's ended dial attempts counted by outcome in
// buckets of Step from Start (a multiple of Step since the epoch, UTC).
type AttemptBuckets struct {
	Start  time.Time
	Step   time.Duration
	N      int            // the number of buckets from Start to the last attempt
	Counts []AttemptCount // bucket by bucket, oldest first
}

// AttemptCount is the number of attempts with one status started in the
// bucket Start+Bucket*Step.
type AttemptCount struct {
	Bucket int
	Status string
	N      int
}

// BatchAttempts counts the batch's ended attempts by status over time, the
// bucket size picked from the span between its first and last attempt. A
// batch without ended attempts gives N == 0.
func (db *Dashboard) BatchAttempts(ctx context.Context, orgID, batchID string) (AttemptBuckets, error) {
	var out AttemptBuckets
	var first, last *int64
	err := db.c.ReadRow(ctx, `SELECT min(a.started_at), max(a.started_at) FROM call_attempts a
		JOIN calls c ON c.id = a.call_id WHERE c.org_id = ? AND c.batch_id = ? AND a.ended_at IS NOT NULL`,
		orgID, batchID).Scan(&first, &last)
	if err != nil {
		return out, fmt.Errorf("storage: batch attempts span: %w", err)
	}
	if first == nil || last == nil {
		return out, nil
	}
	step := attemptSteps[len(attemptSteps)-1]
	for _, s := range attemptSteps {
		ms := s.Milliseconds()
		if *last/ms-*first/ms < maxAttemptBuckets {
			step = s
			break
		}
	}
	ms := step.Milliseconds()
	start := *first / ms
	out.Start, out.Step, out.N = sqldb.FromMS(start*ms), step, int(*last/ms-start)+1
	rows, err := db.c.ReadRows(ctx, `SELECT a.started_at / ? AS b, a.status, count(*) FROM call_attempts a
		JOIN calls c ON c.id = a.call_id WHERE c.org_id = ? AND c.batch_id = ? AND a.ended_at IS NOT NULL
		GROUP BY b, a.status ORDER BY b, a.status`, ms, orgID, batchID)
	if err != nil {
		return out, fmt.Errorf("storage: batch attempts: %w", err)
	}
	err = sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var b int64
		var c AttemptCount
		if err := sc.Scan(&b, &c.Status, &c.N); err != nil {
			return err
		}
		c.Bucket = int(b - start)
		out.Counts = append(out.Counts, c)
		return nil
	})
	return out, err
}
