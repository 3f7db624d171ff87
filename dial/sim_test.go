package dial

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recorder collects progress reports; Dial never calls it concurrently, but
// tests read it from another goroutine.
type recorder struct {
	mu    sync.Mutex
	steps []Progress
	seen  chan string // every status, for tests that act on one
}

func newRecorder() *recorder { return &recorder{seen: make(chan string, 8)} }

func (r *recorder) report(p Progress) {
	r.mu.Lock()
	r.steps = append(r.steps, p)
	r.mu.Unlock()
	r.seen <- p.Status
}

func (r *recorder) statuses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.steps {
		out = append(out, p.Status)
	}
	return out
}

// Outcomes by number, in a synctest bubble: the ring and talk waits take no
// real time and are checked exactly.
func TestSimOutcomes(t *testing.T) {
	sim := &Sim{RingFor: 20 * time.Millisecond, TalkFor: 30 * time.Millisecond}
	const ring, ringAndTalk = 20 * time.Millisecond, 50 * time.Millisecond
	cases := []struct {
		number string
		want   Result
		steps  []string
		took   time.Duration
	}{
		{"+15550000486", Result{Status: StatusBusy, SIPCode: 486}, []string{StatusConnecting, StatusRinging}, 0},
		{"+15550000408", Result{Status: StatusNoAnswer, SIPCode: 408}, []string{StatusConnecting, StatusRinging}, ring},
		{"+15550000500", Result{Status: StatusFailed, SIPCode: 500, Reason: "simulated failure: SIP 500 Server Internal Error"}, []string{StatusConnecting}, 0},
		{"+15550001234", Result{Status: StatusCompleted, SIPCode: 200, Duration: 30 * time.Millisecond, Summary: "Simulated call with +15550001234 lasted 30ms"},
			[]string{StatusConnecting, StatusRinging, StatusActive}, ringAndTalk},
		// Only the last four digits count: +4930500 ends in 0500, +4915100486 in 0486.
		{"+4930500", Result{Status: StatusFailed, SIPCode: 500, Reason: SimFailureReason}, []string{StatusConnecting}, 0},
		{"+4915100486", Result{Status: StatusBusy, SIPCode: 486}, []string{StatusConnecting, StatusRinging}, 0},
		{"+15550004860", Result{Status: StatusCompleted, SIPCode: 200, Duration: 30 * time.Millisecond, Summary: "Simulated call with +15550004860 lasted 30ms"},
			[]string{StatusConnecting, StatusRinging, StatusActive}, ringAndTalk},
	}

	for _, c := range cases {
		t.Run(c.number, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				start := time.Now()
				got, err := sim.Dial(context.Background(), Call{ID: "c1", Attempt: 2, PhoneNumber: c.number}, rec.report)
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took != c.took {
					t.Fatalf("took %s, want %s", took, c.took)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("result %+v, want %+v", got, c.want)
				}
				if s := rec.statuses(); !reflect.DeepEqual(s, c.steps) {
					t.Fatalf("progress %v, want %v", s, c.steps)
				}
				for _, p := range rec.steps {
					if p.RoomID != "sim-room-c1-2" || p.JobID != "sim-job-c1-2" || p.SIPParticipantID != "sim-sip-c1-2" || p.At.IsZero() {
						t.Fatalf("progress ids: %+v", p)
					}
				}
			})
		})
	}
}

// Defaults (1 s ring, 3 s talk), in a synctest bubble: the four seconds
// pass on the bubble's clock, not the test's.
func TestSimDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := &Sim{}
		if sim.Name() != "sim" {
			t.Fatalf("name %q", sim.Name())
		}
		var at []time.Time
		start := time.Now()
		res, err := sim.Dial(context.Background(), Call{ID: "x", Attempt: 1, PhoneNumber: "+15551230000"}, func(p Progress) { at = append(at, p.At) })
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 4*time.Second {
			t.Fatalf("took %s, want 1s ring + 3s talk", took)
		}
		if res.Status != StatusCompleted || res.Duration != 3*time.Second || res.Summary != "Simulated call with +15551230000 lasted 3s" {
			t.Fatalf("result %+v", res)
		}
		// connecting and ringing at the start, active after the 1 s ring.
		if len(at) != 3 || !at[0].Equal(start) || !at[1].Equal(start) || at[2].Sub(at[1]) != time.Second {
			t.Fatalf("progress times %v from %v", at, start)
		}

		start = time.Now()
		if res, _ := sim.Dial(context.Background(), Call{PhoneNumber: "+15550000408"}, nil); res.Status != StatusNoAnswer || time.Since(start) != time.Second {
			t.Fatalf("no answer: %+v after %v", res, time.Since(start))
		}
		start = time.Now()
		none := &Sim{RingFor: -1, TalkFor: 5 * time.Millisecond}
		if res, _ := none.Dial(context.Background(), Call{PhoneNumber: "+15551230000"}, nil); res.Status != StatusCompleted || time.Since(start) != 5*time.Millisecond {
			t.Fatalf("negative ring: %+v after %v", res, time.Since(start))
		}
	})
}

// dialAndCancelOn dials with minute-long waits, in a synctest bubble, and
// cancels ctx from another goroutine once status is reported; Dial must
// hang up at once, before any time passes.
func dialAndCancelOn(t *testing.T, number, status string) (res Result, steps []string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		sim := &Sim{RingFor: time.Minute, TalkFor: time.Minute}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec := newRecorder()
		go func() {
			for s := range rec.seen {
				if s == status {
					cancel()
					return
				}
			}
		}()
		start := time.Now()
		var err error
		if res, err = sim.Dial(ctx, Call{ID: "c9", Attempt: 1, PhoneNumber: number}, rec.report); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 0 {
			t.Fatalf("Dial returned %s after the cancel on %s", took, status)
		}
		steps = rec.statuses()
	})
	return res, steps
}

func TestSimCancelWhileRinging(t *testing.T) {
	res, steps := dialAndCancelOn(t, "+15551230000", StatusRinging)
	if res.Status != StatusCancelled || res.Duration != 0 {
		t.Fatalf("result %+v", res)
	}
	if !reflect.DeepEqual(steps, []string{StatusConnecting, StatusRinging}) {
		t.Fatalf("progress %v", steps)
	}
	// A no-answer number hung up while ringing is cancelled, not no_answer.
	if res, _ := dialAndCancelOn(t, "+15550000408", StatusRinging); res.Status != StatusCancelled {
		t.Fatalf("no-answer number: %+v", res)
	}
}

// Hung up 20 ms into the talk: the result says exactly how long it lasted.
func TestSimCancelWhileActive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := &Sim{RingFor: 5 * time.Millisecond, TalkFor: time.Minute}
		ctx, cancel := context.WithCancel(context.Background())
		rec := newRecorder()
		go func() {
			for s := range rec.seen {
				if s == StatusActive {
					time.Sleep(20 * time.Millisecond) // synctest: 20 ms of fake talk time before the hang-up
					cancel()
					return
				}
			}
		}()
		res, err := sim.Dial(ctx, Call{ID: "c9", Attempt: 1, PhoneNumber: "+15551230000"}, rec.report)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusCancelled || res.Duration != 20*time.Millisecond || res.Summary != "" {
			t.Fatalf("result %+v", res)
		}
		if s := rec.statuses(); !reflect.DeepEqual(s, []string{StatusConnecting, StatusRinging, StatusActive}) {
			t.Fatalf("progress %v", s)
		}
	})
}

func TestSimCancelledBeforeDial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	res, err := (&Sim{}).Dial(ctx, Call{PhoneNumber: "+15551230000"}, func(Progress) { called = true })
	if err != nil || res.Status != StatusCancelled || called {
		t.Fatalf("got %+v, %v, progress called %v", res, err, called)
	}
}

// One Sim dials many calls at once (the dial queue runs them concurrently).
func TestSimConcurrentDials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := &Sim{RingFor: 2 * time.Millisecond, TalkFor: 3 * time.Millisecond}
		numbers := []string{"+15550000486", "+15550000408", "+15550000500", "+15551230000"}
		want := []string{StatusBusy, StatusNoAnswer, StatusFailed, StatusCompleted}
		var wg sync.WaitGroup
		errs := make(chan string, 40)
		start := time.Now()
		for i := range 40 {
			wg.Go(func() {
				n := i % 4
				res, err := sim.Dial(context.Background(), Call{ID: "c", Attempt: i, PhoneNumber: numbers[n]}, func(Progress) {})
				if err != nil || res.Status != want[n] {
					errs <- numbers[n] + ": " + res.Status
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		// 40 dials side by side take as long as the longest one.
		if took := time.Since(start); took != 5*time.Millisecond {
			t.Fatalf("took %s, want the 5 ms of one answered call", took)
		}
	})
}
