package media

import (
	"sync"
	"time"
)

// One clock paces every call of the process: a single goroutine wakes
// every 20 ms on an absolute schedule (start + n*20 ms, so it does not
// drift) and runs each session's tick. A ticker per call would be 100+
// timers waking at scattered moments on 2 cores; one wake-up per 20 ms
// costs one timer whatever the number of calls, and a tick is cheap (one
// G.711 encode and one sendto, no blocking).
type clock struct {
	mu       sync.Mutex
	sessions []ticker
	running  bool
}

// ticker is one stream the clock paces: an RTP Session, or another
// transport's (Every).
type ticker interface{ tick() }

type funcTicker struct{ f func() }

func (t *funcTicker) tick() { t.f() }

// Every runs f on the process's shared 20 ms clock until stop is called:
// another transport of dial.Media (a browser's) paces its frames with the
// same one wake-up as the RTP sessions. f must not block.
func Every(f func()) (stop func()) {
	t := &funcTicker{f}
	shared.add(t)
	var once sync.Once
	return func() { once.Do(func() { shared.remove(t) }) }
}

var shared = &clock{}

// maxLag is how far behind its schedule the clock may fall (a stalled
// process) before it stops catching up and starts again from now.
const maxLag = 100 * time.Millisecond

func (c *clock) add(s ticker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions = append(c.sessions, s)
	if !c.running {
		c.running = true
		go c.run()
	}
}

func (c *clock) remove(s ticker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.sessions {
		if x == s {
			last := len(c.sessions) - 1
			c.sessions[i] = c.sessions[last]
			c.sessions[last] = nil
			c.sessions = c.sessions[:last]
			return
		}
	}
}

// run ticks until no session is left (so an idle process has no timer).
func (c *clock) run() {
	var list []ticker
	next := time.Now()
	t := time.NewTimer(0)
	<-t.C
	for {
		c.mu.Lock()
		list = append(list[:0], c.sessions...)
		if len(list) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		for _, s := range list {
			s.tick()
		}
		clear(list)
		next = next.Add(FrameDuration)
		d := time.Until(next)
		if d < -maxLag {
			next = time.Now()
			continue
		}
		if d > 0 {
			t.Reset(d)
			<-t.C
		}
	}
}
