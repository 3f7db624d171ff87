package sipdial

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"

	"github.com/agentd/agentd/internal/testkit/sipptest"
)

// fakeInbound records what the SIP dialer reports.
type fakeInbound struct {
	mu      sync.Mutex
	started []dial.InboundCall
	ended   []string // status of each end, keyed by order
	keys    []string
	done    chan struct{}
}

func (f *fakeInbound) InboundStarted(_ context.Context, c dial.InboundCall) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.To != "+15550001111" {
		return "", dial.ErrNoAgent
	}
	f.started = append(f.started, c)
	return "call-1", nil
}

func (f *fakeInbound) InboundEnded(_ context.Context, c dial.InboundCall, status, _ string) {
	f.mu.Lock()
	f.ended = append(f.ended, status)
	f.keys = append(f.keys, c.Key)
	f.mu.Unlock()
	close(f.done)
}

// An INVITE from sipp (a caller) to an agent's number is answered, reported
// with caller, callee and Call-ID, and followed to the caller's BYE.
func TestSIPInboundCall(t *testing.T) {
	port := sipptest.FreePort(t)
	s := newTestSIP(t, "127.0.0.1:9", func(c *Config) { c.ListenAddr = "127.0.0.1:" + strconv.Itoa(port) })
	in := &fakeInbound{done: make(chan struct{})}
	s.SetInbound(in)
	sipp := sipptest.Start(t, "inbound_call", sipptest.Options{Calls: 1, Args: []string{"-s", "+15550001111", s.LocalAddr()}})
	if code := sipp.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("sipp exit code %d", code)
	}
	select {
	case <-in.done:
	case <-time.After(5 * time.Second):
		t.Fatal("inbound call never ended")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.started) != 1 || in.started[0].From != "+14155550123" || in.started[0].To != "+15550001111" ||
		in.started[0].Dialer != "sip" || in.started[0].Key == "" {
		t.Fatalf("started: %+v", in.started)
	}
	if in.ended[0] != dial.StatusCompleted || in.keys[0] != in.started[0].Key {
		t.Fatalf("ended: %v %v", in.ended, in.keys)
	}
}
