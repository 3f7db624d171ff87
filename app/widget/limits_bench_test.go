package widget

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// BenchmarkLimits: the per-visitor and per-address checks of one visitor
// message, in this process's windows (SQLite's) and through the leases on
// the database under test (PostgreSQL's; on SQLite, what a lease there
// would cost). A visitor sends 10 messages 100 ms apart, a new one every
// 10, from one of 100 addresses; nothing is refused.
//
//	go test ./app/widget -run '^$' -bench Limits
func BenchmarkLimits(b *testing.B) {
	for _, shared := range []bool{false, true} {
		b.Run(map[bool]string{false: "memory", true: "leased"}[shared], func(b *testing.B) {
			ctx := context.Background()
			db := storetest.Fresh(b)
			var d Deps
			if shared {
				d.Limits = access.NewLimiter(time.Minute, db.Orgs)
			}
			s := New(d, Config{})
			now := time.Unix(1_800_000_000, 0)
			n := 0
			for b.Loop() {
				now = now.Add(100 * time.Millisecond)
				conv, addr := "c"+strconv.Itoa(n/10), "192.0.2."+strconv.Itoa(n%100)
				n++
				if ok, _, err := s.take(ctx, s.visitor, "visitor", conv, now); !ok || err != nil {
					b.Fatal("visitor refused", err)
				}
				if ok, _, err := s.take(ctx, s.address, "addr", addr, now); !ok || err != nil {
					b.Fatal("address refused", err)
				}
			}
		})
	}
}
