package voice

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// testTransfer is the in-memory transport's transfer: REFER answers
// referErr; Dial answers a leg on its own in-memory media (the person,
// who says hello), or dialErr.
type testTransfer struct {
	t        *testing.T
	referErr error
	dialErr  error
	hello    []int16

	mu      sync.Mutex
	referTo []string
	dialled []string
	leg     *testLeg
}

func (x *testTransfer) Refer(_ context.Context, target string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.referTo = append(x.referTo, target)
	return x.referErr
}

func (x *testTransfer) Dial(_ context.Context, target string) (dial.Leg, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dialled = append(x.dialled, target)
	if x.dialErr != nil {
		return nil, x.dialErr
	}
	l := &testLeg{m: newTestMedia(x.t), done: make(chan struct{})}
	l.m.say(x.hello)
	x.leg = l
	return l, nil
}

type testLeg struct {
	m    *testMedia
	once sync.Once
	done chan struct{}
}

func (l *testLeg) Media() dial.Media     { return l.m }
func (l *testLeg) Done() <-chan struct{} { return l.done }
func (l *testLeg) Hangup() {
	l.once.Do(func() { close(l.done); l.m.Close() })
}

func transferRig(t *testing.T, mode string, x *testTransfer) *rig {
	r := newRig(t, map[string]any{"transferDestinations": []map[string]any{
		{"name": "Sales", "number": "+14155550199", "mode": mode, "description": "orders"}}}, nil)
	r.xfer = x
	r.texts("Put me through to sales.")
	r.model.Push(llmtest.Reply{Content: "One moment.", ToolCalls: []llmtest.ToolCall{
		{ID: "t1", Name: "transfer_call", Arguments: `{"destination":"Sales","reason":"an order"}`}}})
	return r
}

// Warm, in memory: the person hears the briefing, then the caller's
// speech through the bridge; the caller hears the person. (The race
// detector watches the loop, the bridge and the leg.)
func TestTransferWarmBridges(t *testing.T) {
	x := &testTransfer{t: t, hello: voiceOf(t, "Hello?")}
	r := transferRig(t, "warm", x)
	done := r.start()
	r.media.say(voiceOf(t, "Put me through to sales."))
	waitFor(t, 20*time.Second, "the bridge", func() bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.leg != nil && len(bursts(x.leg.m.agentLog())) >= 1 && strings.Contains(lines(r.transcript()), "transferred to Sales")
	})
	x.mu.Lock()
	leg := x.leg
	x.mu.Unlock()
	briefed := len(leg.m.agentLog())
	r.media.say(make([]int16, 8000))
	r.media.say(voiceOf(t, "Hello, I would like a cake."))
	waitFor(t, 15*time.Second, "the caller's words at the person's", func() bool {
		return len(bursts(leg.m.agentLog()[briefed:])) >= 1
	})
	leg.Hangup() // the person hangs up: the agent's part ends
	end := r.end(done, 10*time.Second)
	if end.Reason != "" {
		t.Errorf("ended %+v", end)
	}
	c, _, _ := r.db.Calls.GetCallControl(context.Background(), r.call)
	if !strings.Contains(string(c.Transfers), `"outcome":"transferred"`) || !strings.Contains(string(c.Transfers), `"method":"bridge"`) {
		t.Errorf("transfers %s", c.Transfers)
	}
	if sp := strings.Join(r.spoken(), "|"); !strings.Contains(sp, "Reason: an order. The caller said: Put me through to sales.") {
		t.Errorf("speech requests %q: want the briefing", sp)
	}
}

// Cold, REFER refused: agentd dials and bridges; REFER taken: the call
// is over for the agent.
func TestTransferCold(t *testing.T) {
	for _, c := range []struct {
		name     string
		referErr error
		method   string
	}{{"refer", nil, "refer"}, {"refused", fmt.Errorf("%w: 603", dial.ErrReferRefused), "bridge"}} {
		t.Run(c.name, func(t *testing.T) {
			x := &testTransfer{t: t, referErr: c.referErr, hello: voiceOf(t, "Hello?")}
			r := transferRig(t, "cold", x)
			done := r.start()
			r.media.say(voiceOf(t, "Put me through to sales."))
			if c.method == "bridge" {
				waitFor(t, 20*time.Second, "the leg", func() bool {
					x.mu.Lock()
					defer x.mu.Unlock()
					return x.leg != nil
				})
				x.mu.Lock()
				x.leg.Hangup()
				x.mu.Unlock()
			}
			r.end(done, 20*time.Second)
			if tr := lines(r.transcript()); !strings.Contains(tr, "tool: transfer_call: transferred to Sales (cold, "+c.method+")") {
				t.Errorf("transcript:\n%s", tr)
			}
			if len(x.referTo) != 1 || x.referTo[0] != "+14155550199" {
				t.Errorf("REFER to %v", x.referTo)
			}
		})
	}
}

// Nobody answers: the agent says so and the call goes on.
func TestTransferNoAnswer(t *testing.T) {
	x := &testTransfer{t: t, dialErr: &dial.LegError{Status: dial.StatusNoAnswer}}
	r := transferRig(t, "warm", x)
	r.start()
	r.media.say(voiceOf(t, "Put me through to sales."))
	waitFor(t, 20*time.Second, "the apology", func() bool {
		return strings.Contains(lines(r.transcript()), "agent: I'm sorry, I couldn't connect you to Sales: nobody answered.")
	})
	if tr := lines(r.transcript()); !strings.Contains(tr, "tool: transfer_call: no_answer to Sales (warm, bridge)") {
		t.Errorf("transcript:\n%s", tr)
	}
}

// Warm, a machine answers at sales: it is hung up on and the agent tells
// the caller.
func TestTransferWarmMachine(t *testing.T) {
	x := &testTransfer{t: t, hello: voiceOf(t, machineGreeting)}
	r := transferRig(t, "warm", x)
	r.start()
	r.media.say(voiceOf(t, "Put me through to sales."))
	waitFor(t, 20*time.Second, "the apology", func() bool {
		return strings.Contains(lines(r.transcript()), "agent: I'm sorry, I couldn't connect you to Sales: I only reached voicemail.")
	})
	x.mu.Lock()
	defer x.mu.Unlock()
	select {
	case <-x.leg.done:
	default:
		t.Error("the machine's leg was not hung up")
	}
	if n := len(bursts(x.leg.m.agentLog())); n != 0 {
		t.Errorf("the machine heard %d bursts of the briefing", n)
	}
}
