package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentd/agentd/dial"
)

// CallsConfig configures the dial queue and the dialer.
type CallsConfig struct {
	Dialer        string        // none (default), sim, sip, livekit
	DialCPS       float64       // calls started per second; default 1
	MaxConcurrent int           // calls dialled at once; default 10
	SimTalk       time.Duration // sim: talk time of an answered call; default 3 s (--sim-call-seconds)
	SimRing       time.Duration // sim: ring time; default 1 s
	Lease         time.Duration // dial claim lease; default 30 s (an attempt of a dead process is settled after it)
	Poll          time.Duration // scheduler/queue poll for calls stored by other processes; default 1 s
	Drain         time.Duration // on shutdown, how long dialling calls may finish; default 5 s
	RetryLater    time.Duration // delay after a dialer's "retry later"; default 5 s
	DialLog       string        // if set, each dial appends "callID attempt" to this file (tests, audits)
	// Telephony holds the sip and livekit dialer settings (app/telephony.go).
	Telephony TelephonyConfig

	// DialerImpl, when set, is used instead of Dialer (tests and embedders).
	DialerImpl dial.Dialer
}

// callsState is what the call handlers share.
type callsState struct {
	dialer     dial.Dialer // nil: --dialer none
	queue      *dial.Queue
	sched      *dial.Scheduler
	dialerName string
}

// newDialer builds the configured dialer; nil means none. The sip and
// livekit dialers are wired here by the lead (see README).
func newDialer(cfg CallsConfig, log *slog.Logger) (dial.Dialer, error) {
	if cfg.DialerImpl != nil {
		return cfg.DialerImpl, nil
	}
	switch cfg.Dialer {
	case "", "none":
		return nil, nil
	case "sim":
		return &dial.Sim{RingFor: cfg.SimRing, TalkFor: cfg.SimTalk}, nil
	case "sip", "livekit":
		return newTelephonyDialer(cfg.Dialer, cfg.Telephony, log)
	}
	return nil, fmt.Errorf("--dialer %q: use none, sim, sip or livekit", cfg.Dialer)
}

// wireCalls sets up the scheduler, the dial queue and the dialer.
func (a *App) wireCalls(ctx context.Context) error {
	cfg := a.cfg.Calls
	d, err := newDialer(cfg, a.log)
	if err != nil {
		return err
	}
	a.wireTelephony(d)
	qd := d
	if qd == nil {
		qd = dial.NotConfigured{}
	}
	if cfg.DialLog != "" {
		f, err := os.OpenFile(cfg.DialLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--dial-log: %w", err)
		}
		a.onClose(f.Close)
		qd = &loggingDialer{Dialer: qd, f: f}
	}
	st := callsState{dialer: d, dialerName: qd.Name()}
	var sched *dial.Scheduler
	st.queue = dial.NewQueue(dial.QueueConfig{
		DB: a.db, Dialer: qd, Log: a.log,
		CPS: cfg.DialCPS, MaxConcurrent: cfg.MaxConcurrent, Lease: cfg.Lease, Poll: cfg.Poll,
		Drain: cfg.Drain, RetryLater: cfg.RetryLater,
		OnRetry: func() { sched.Wake() }, Observer: a.queueObserver(qd.Name()),
	})
	sched = dial.NewScheduler(a.db, nil, cfg.Poll, a.log, st.queue.Wake)
	st.sched = sched
	a.srv.calls = st
	a.goWorker(sched.Run)
	a.goWorker(st.queue.Run)
	return nil
}

// loggingDialer appends "callID attempt" to a file before each dial, so a
// test (or an audit) can prove no attempt was dialled twice, even across a
// crash: the line is written with one append before the dialer is called.
type loggingDialer struct {
	dial.Dialer
	mu sync.Mutex
	f  *os.File
}

func (l *loggingDialer) Dial(ctx context.Context, c dial.Call, p func(dial.Progress)) (dial.Result, error) {
	l.mu.Lock()
	_, err := fmt.Fprintf(l.f, "%s %d\n", c.ID, c.Attempt)
	l.mu.Unlock()
	if err != nil {
		return dial.Result{}, fmt.Errorf("dial log: %w", err)
	}
	return l.Dialer.Dial(ctx, c, p)
}
