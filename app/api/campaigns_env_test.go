package api

import (
	"context"
	"sync"
	"time"

	"github.com/agentd/agentd/dial"
)

// concurrencyDialer is the sim dialer with a log of every dial's start and
// end, per agent, in the order they happened: the peak of calls dialled at
// once per agent is replayed from it.
type concurrencyDialer struct {
	sim    *dial.Sim
	mu     sync.Mutex
	events []dialEvent
}

type dialEvent struct {
	agent string
	delta int // +1 start, -1 end
}

func newConcurrencyDialer(talk time.Duration) *concurrencyDialer {
	return &concurrencyDialer{sim: &dial.Sim{RingFor: 10 * time.Millisecond, TalkFor: talk}}
}

func (d *concurrencyDialer) Name() string { return "sim" }

func (d *concurrencyDialer) Dial(ctx context.Context, c dial.Call, p func(dial.Progress)) (dial.Result, error) {
	d.log(c.AgentID, +1)
	defer d.log(c.AgentID, -1)
	return d.sim.Dial(ctx, c, p)
}

func (d *concurrencyDialer) log(agent string, delta int) {
	d.mu.Lock()
	d.events = append(d.events, dialEvent{agent, delta})
	d.mu.Unlock()
}

// count is the number of starts ("+") or ends ("-") logged.
func (d *concurrencyDialer) count(sign string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, e := range d.events {
		if (e.delta > 0) == (sign == "+") {
			n++
		}
	}
	return n
}

// peaks replays the log: the most calls each agent had at once.
func (d *concurrencyDialer) peaks() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur, peak := map[string]int{}, map[string]int{}
	for _, e := range d.events {
		cur[e.agent] += e.delta
		peak[e.agent] = max(peak[e.agent], cur[e.agent])
	}
	return peak
}
