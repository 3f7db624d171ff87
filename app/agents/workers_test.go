package agents

import (
	"fmt"
	"testing"

	"github.com/agentd/agentd/storage/agentstore"
)

func TestReliabilityScore(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		want        string
	}{{0, 0, "0.0000"}, {0, 5, "0.0000"}, {5, 5, "1.0000"}, {12, 13, "0.9231"}, {1, 3, "0.3333"}, {2, 3, "0.6667"},
		{1, 8, "0.1250"}, {1, 20000, "0.0001"}, {1, 20001, "0.0000"}, {99994, 100000, "0.9999"}, {99995, 100000, "1.0000"}, {199991, 200000, "1.0000"}} {
		if got := reliabilityScore(c.done, c.total); got != c.want {
			t.Errorf("%d/%d = %s, want %s", c.done, c.total, got, c.want)
		}
	}
	// Against float formatting on a grid, away from exact halves.
	for total := int64(1); total < 300; total++ {
		for done := int64(0); done <= total; done++ {
			if want := fmt.Sprintf("%.4f", float64(done)/float64(total)); reliabilityScore(done, total) != want {
				f := float64(done) / float64(total) * 1e4
				if f-float64(int64(f)) != 0.5 {
					t.Fatalf("%d/%d = %s, want %s", done, total, reliabilityScore(done, total), want)
				}
			}
		}
	}
}

func TestWorkforceStatus(t *testing.T) {
	for _, c := range []struct {
		status string
		live   int64
		want   string
	}{{"inactive", 3, "inactive"}, {"active", 1, "active"}, {"deployed", 0, "idle"}, {"training", 2, "active"}} {
		if got := workforceStatus(agentstore.Worker{Status: c.status, LiveCalls: c.live}); got != c.want {
			t.Errorf("%s with %d live calls: %s, want %s", c.status, c.live, got, c.want)
		}
	}
}
