// Package calls is the calls feature: scheduling single and batch calls,
// immediate outbound calls, the call records, cancelling, the voice agent's
// result and LiveKit webhooks, over storage and the dial queue. It owns the
// rules (validation with field paths, errors with a kind); the HTTP layer
// (package app) and the CLI (cmd) only translate.
package calls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/dial/sipdial"
	"github.com/agentd/agentd/internal/wakeup"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/callstore"
)

// Config configures the dial queue and the dialer. It holds values only:
// cmd fills it from flags and environment variables.
type Config struct {
	Dialer        string        // none (default), sim, sip, livekit
	DialCPS       float64       // calls started per second; default 1
	MaxConcurrent int           // calls dialled at once; default 10
	SimTalk       time.Duration // sim: talk time of an answered call; default 3 s
	SimRing       time.Duration // sim: ring time; default 1 s
	Lease         time.Duration // dial claim lease; default 30 s (an attempt of a dead process is settled after it)
	Poll          time.Duration // scheduler/queue poll for calls stored by other processes; default 1 s
	Drain         time.Duration // on shutdown, how long dialling calls may finish; default 5 s
	RetryLater    time.Duration // delay after a dialer's "retry later"; default 5 s
	DialLog       string        // if set, each dial appends "callID attempt unixMicros" to this file (tests, audits)
	// Telephony holds the sip and livekit dialer settings.
	Telephony TelephonyConfig

	// DialerImpl, when set, is used instead of Dialer (tests and embedders),
	// and stays theirs to close.
	DialerImpl dial.Dialer
	// Observe, when set, gives the dial queue an observer for the named
	// dialer (the server's metrics).
	Observe func(dialer string) dial.QueueObserver
}

// TelephonyConfig configures the real dialers: Dialer "sip" uses SIP,
// "livekit" uses LiveKit. Only the chosen one is used.
type TelephonyConfig struct {
	SIP     sipdial.Config
	LiveKit livekitdial.LiveKitConfig
}

// Deps are the stores the calls feature uses.
type Deps struct {
	Calls  *callstore.Calls
	Agents *agentstore.Agents
	// Queued wakes the scheduler and the dial queue on calls stored by any
	// process (storage.Stores.Waker(ChanCalls)); nil: only the poll.
	Queued wakeup.Waker
}

// Service is the calls feature of a server process: the store, the dialer,
// the dial queue and the scheduler it wakes when calls are stored.
type Service struct {
	db      Deps
	log     *slog.Logger
	now     func() time.Time
	cfg     Config
	dialer  dial.Dialer // nil: no dialer configured
	queue   *dial.Queue
	sched   *dial.Scheduler
	callers callerPool
	workers []func(context.Context) error
	closers []func() error
}

// New builds the dialer, the dial queue and the scheduler. Run Workers
// with the server; Close after they stopped (a SIP dialer's socket is
// closed only once the queue's drain hung up the calls in flight).
func New(db Deps, cfg Config, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Service{db: db, log: log, cfg: cfg, now: func() time.Time { return time.Now().UTC() }}
	d, err := NewDialer(cfg, log)
	if err != nil {
		return nil, err
	}
	s.dialer = d
	if sp, ok := d.(*sipdial.Dialer); ok {
		sp.SetInbound(s) // INVITEs to an agent's number become inbound calls
	}
	if d != nil && cfg.DialerImpl == nil {
		if c, ok := d.(io.Closer); ok {
			s.closers = append(s.closers, c.Close)
		}
		if lk, ok := d.(*livekitdial.LiveKit); ok {
			s.workers = append(s.workers, s.checkTrunk(lk))
		}
	}
	qd := d
	if qd == nil {
		qd = dial.NotConfigured{}
	}
	if cfg.DialLog != "" {
		f, err := os.OpenFile(cfg.DialLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("dial log: %w", err)
		}
		s.closers = append(s.closers, f.Close)
		qd = &loggingDialer{Dialer: qd, f: f}
	}
	var sched *dial.Scheduler
	s.queue = dial.NewQueue(dial.QueueConfig{
		DB: dial.Deps{Calls: db.Calls, Queued: db.Queued}, Dialer: qd, Log: log,
		CPS: cfg.DialCPS, MaxConcurrent: cfg.MaxConcurrent, Lease: cfg.Lease, Poll: cfg.Poll,
		Drain: cfg.Drain, RetryLater: cfg.RetryLater,
		OnRetry: func() { sched.Wake() }, Observer: observer(cfg, qd.Name()),
	})
	sched = dial.NewScheduler(dial.Deps{Calls: db.Calls, Queued: db.Queued}, nil, cfg.Poll, log, s.queue.Wake)
	s.sched = sched
	s.workers = append(s.workers, sched.Run, s.queue.Run)
	return s, nil
}

// Workers are the background loops (scheduler, dial queue, LiveKit trunk
// check) the server runs until it stops.
func (s *Service) Workers() []func(context.Context) error { return s.workers }

// Close releases what New opened (the dial log, a SIP socket), last opened first.
func (s *Service) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// NewDialer builds the configured dialer; nil means none. The SIP dialer
// holds a socket: its owner closes it.
func NewDialer(cfg Config, log *slog.Logger) (dial.Dialer, error) {
	if cfg.DialerImpl != nil {
		return cfg.DialerImpl, nil
	}
	switch cfg.Dialer {
	case "", "none":
		return nil, nil
	case "sim":
		return &dial.Sim{RingFor: cfg.SimRing, TalkFor: cfg.SimTalk}, nil
	case "sip":
		d, err := sipdial.New(cfg.Telephony.SIP, log)
		if err != nil {
			return nil, fmt.Errorf("sip dialer: %w", err)
		}
		return d, nil
	case "livekit":
		d, err := livekitdial.NewLiveKit(cfg.Telephony.LiveKit, log)
		if err != nil {
			return nil, fmt.Errorf("livekit dialer: %w", err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("dialer %q: use none, sim, sip or livekit", cfg.Dialer)
}

// checkTrunk checks the LiveKit outbound trunk in the background at start.
// A wrong trunk id or an unreachable server is only logged: the server
// still starts (calls then fail or wait with a clear reason) so that
// LiveKit may come up later.
func (s *Service) checkTrunk(lk *livekitdial.LiveKit) func(context.Context) error {
	trunk := s.cfg.Telephony.LiveKit.OutboundTrunkID
	return func(ctx context.Context) error {
		if err := lk.CheckTrunk(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("livekit: outbound trunk check failed; calls will fail until it is fixed",
					"trunk", trunk, "err", err)
			}
			return nil
		}
		s.log.Info("livekit: outbound trunk found", "trunk", trunk)
		return nil
	}
}

// loggingDialer appends "callID attempt unixMicros" to a file before each
// dial (the time lets a test measure the pace across processes), so a
// test (or an audit) can prove no attempt was dialled twice, even across a
// crash: the line is written with one append before the dialer is called.
type loggingDialer struct {
	dial.Dialer
	mu sync.Mutex
	f  *os.File
}

// Dial writes the attempt to the log, then dials.
func (l *loggingDialer) Dial(ctx context.Context, c dial.Call, p func(dial.Progress)) (dial.Result, error) {
	l.mu.Lock()
	_, err := fmt.Fprintf(l.f, "%s %d %d\n", c.ID, c.Attempt, time.Now().UnixMicro())
	l.mu.Unlock()
	if err != nil {
		return dial.Result{}, fmt.Errorf("dial log: %w", err)
	}
	return l.Dialer.Dial(ctx, c, p)
}

// observer is cfg's queue observer for the dialer, nil when none is asked.
func observer(cfg Config, dialer string) dial.QueueObserver {
	if cfg.Observe == nil {
		return nil
	}
	return cfg.Observe(dialer)
}

// Transferrer is the dialer when it can hand its calls on itself
// (LiveKit's TransferSIPParticipant); nil otherwise.
func (s *Service) Transferrer() dial.Transferrer {
	t, _ := s.dialer.(dial.Transferrer)
	return t
}
