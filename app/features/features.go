// Package features is agentd's one composition root: it builds every
// feature once over the stores, with its settings, and hands out the
// background workers they need. It speaks no HTTP: agentd serve (package
// app) builds the API and the dashboard from the opened set.
package features

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/dashboard"
	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/app/settings"
	"github.com/agentd/agentd/app/voice"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/app/webcall"
	"github.com/agentd/agentd/app/widget"
	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/metrics"
	"github.com/agentd/agentd/internal/safehttp"
	"github.com/agentd/agentd/storage"
)

// Config is the settings of every feature.
type Config struct {
	Calls    calls.Config
	KB       kb.Config
	Webhooks events.Config
	LLM      llm.Config
	Widget   widget.Config
	// STT and TTS are the voice loop's speech services (speech.NewSTT,
	// NewTTS: nil when off).
	STT, TTS speech.Config
	// Recordings is where voice calls' audio is kept and for how long.
	Recordings recordings.Config
	// Analysis tunes the analysis worker (its Model is set from LLM).
	Analysis analysis.Config
	// VoiceMetrics observes the voice loop (nil: none).
	VoiceMetrics voice.Metrics
	Log          *slog.Logger
	// DBPath is the database Open opens: a SQLite file or a PostgreSQL URL.
	DBPath string
	// Metrics, when set (--metrics-addr), collects the dial queues', the
	// embedder's and the stores' figures; nil collects nothing.
	Metrics *metrics.Registry
	// Workers collects the background workers (serve). Off, as for the
	// CLI, the set serves its use cases only: the knowledge base leaves the
	// embedding queue as it is (a running server owns it), no dialer,
	// scheduler, delivery or analysis loop is built to run.
	Workers bool
}

// Set is every feature, each built once over the same stores.
type Set struct {
	Stores   *storage.Stores
	Access   *access.Service
	Agents   *agents.Service
	DNC      *dnc.Service
	Settings *settings.Service
	Calls    *calls.Service
	KB       *kb.Service
	Listings *listings.Service
	Events   *events.Service
	// Conversations is the conversation engine on the configured model.
	Conversations *conversations.Service
	// Widget is the chat widget's rules over the engine.
	Widget *widget.Service
	// Analysis is post-call analysis; AgentTests runs agent test files
	// through Conversations.
	Analysis   *analysis.Service
	AgentTests agenttest.Runner
	// Dashboard is the dashboard's read model (its pages' aggregates).
	Dashboard *dashboard.Service
	// Recordings keeps voice calls' audio (off without a folder).
	Recordings *recordings.Service
	// Voice is the voice loop, the SIP dialer's Talker (nil unless both
	// speech services are set).
	Voice *voice.Service
	// WebCalls runs voice sessions from browsers on Voice (the dashboard's
	// Talk control, the widget's microphone); refused while Voice is nil.
	WebCalls *webcall.Service
	// Deliveries is the webhook delivery worker (nil when cfg.Webhooks
	// turns it off).
	Deliveries *events.Worker

	log     *slog.Logger
	workers []func(context.Context) error
	closers []func() error
}

// Open opens the database at cfg.DBPath (applying migrations) and builds
// every feature over it once, complete, in dependency order (listings share
// the knowledge base's embedder and vector index): the one entry point of
// agentd serve, every CLI command and the tests. The workers it collects
// (cfg.Workers) are run by the caller; Close closes the features, then the
// database.
func Open(ctx context.Context, cfg Config) (*Set, error) {
	stores, err := storage.Open(ctx, cfg.DBPath)
	if err != nil {
		return nil, err
	}
	s := &Set{Stores: stores, Access: NewAccess(stores), closers: []func() error{stores.Close}}
	if err := s.build(ctx, cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// build adds the features to the set's stores; the caller closes the set
// on an error.
func (s *Set) build(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if reg := cfg.Metrics; reg != nil {
		cfg.Calls.Observe = func(dialer string) dial.QueueObserver { return reg.Queue(dialer) }
		cfg.KB.Observe = reg.Embedder
		if err := reg.CollectStore(dbGauges{s.Stores}); err != nil {
			return err
		}
	}
	stores := s.Stores
	s.log = cfg.Log
	s.Agents = agents.New(agents.Deps{Agents: stores.Agents, KB: stores.KB, Secrets: stores.Secrets})
	s.DNC = dnc.New(dnc.Deps{Calls: stores.Calls})
	s.Settings = settings.New(settings.Deps{Calls: stores.Calls})
	s.Dashboard = dashboard.New(dashboard.Deps{Dashboard: stores.Dashboard})
	for _, open := range []func(context.Context, Config) error{s.openEvents, s.openKB, s.openListings, s.openConversations, s.openWidget, s.openAnalysis, s.openRecordings, s.openVoice, s.openCalls} {
		if err := open(ctx, cfg); err != nil {
			return err
		}
	}
	if !cfg.Workers {
		s.workers = nil
	}
	return nil
}

// NewAccess is sign-in, keys and members over the stores (tests make
// organizations and keys with it).
func NewAccess(stores *storage.Stores) *access.Service {
	return access.New(access.Deps{Orgs: stores.Orgs, Calls: stores.Calls})
}

// Workers are the background loops of the features, each to run until its
// context ends.
func (s *Set) Workers() []func(context.Context) error { return s.workers }

// Close releases the features' resources, last opened first.
func (s *Set) Close() error {
	var first error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	s.closers = nil
	return first
}

// openEvents builds the webhook service and, unless turned off, the
// delivery worker, both sending through the forgery-guarded client.
func (s *Set) openEvents(_ context.Context, cfg Config) error {
	wc := cfg.Webhooks
	client := safehttp.New(safehttp.Options{AllowPrivate: wc.AllowPrivate, Resolver: wc.Resolver, MaxBody: events.MaxResponse})
	deps := events.Deps{Webhooks: s.Stores.Webhooks, Events: s.Stores.Events,
		NewEvents: s.Stores.Waker(storage.ChanEvents), NewDeliveries: s.Stores.Waker(storage.ChanDeliveries)}
	s.Events = events.New(deps, client)
	if wc.Disabled || !cfg.Workers {
		return nil
	}
	s.Deliveries = events.NewWorker(events.WorkerConfig{DB: deps, Sender: client, Log: s.log, Concurrency: wc.Concurrency,
		Timeout: wc.Timeout, Lease: wc.Lease, Poll: wc.Poll, Schedule: wc.Schedule, DisableAfter: wc.DisableAfter})
	s.workers = append(s.workers, s.Deliveries.Run)
	return nil
}

// openKB builds the knowledge base: its embedder, the embedding worker and
// the search indexes (loaded in the background).
func (s *Set) openKB(ctx context.Context, cfg Config) error {
	kcfg := cfg.KB
	if kcfg.Fetch == nil {
		kcfg.Fetch = webFetch(cfg)
	}
	svc, err := kb.New(kb.Deps{KB: s.Stores.KB, Vectors: s.Stores.Vectors, Queued: s.Stores.Waker(storage.ChanKB)}, kcfg, s.log)
	if err != nil {
		return err
	}
	if cfg.Workers {
		if err := svc.Prepare(ctx); err != nil {
			return err
		}
	}
	s.KB = svc
	s.workers = append(s.workers, svc.Run, svc.Warm, svc.RunWeb)
	return nil
}

// openListings builds listings on the knowledge base's embedder and vector
// index; without an embedder search is keyword-only.
func (s *Set) openListings(context.Context, Config) error {
	v := listings.NewVectors(s.Stores.Vectors, s.KB.Embedder(), s.KB.VectorIndex())
	if v != nil {
		v.Tuning = s.KB.SearchTuning()
		// Load the listing spaces in the background so the first search
		// after a start does not pay for it.
		s.workers = append(s.workers, func(ctx context.Context) error {
			if err := v.Index.Warm(ctx, listings.SpacePrefix); err != nil && ctx.Err() == nil {
				s.log.Warn("loading listing vectors", "err", err)
			}
			return nil
		})
	}
	s.Listings = listings.New(listings.Deps{Listings: s.Stores.Listings}, v)
	return nil
}

// openCalls builds the dialer, the dial queue and the scheduler.
func (s *Set) openCalls(_ context.Context, cfg Config) error {
	cc := cfg.Calls
	if s.Voice != nil && cfg.Workers {
		cc.Telephony.SIP.Talker = s.Voice
	}
	svc, err := calls.New(calls.Deps{Calls: s.Stores.Calls, Agents: s.Stores.Agents,
		Queued: s.Stores.Waker(storage.ChanCalls)}, cc, s.log)
	if err != nil {
		return err
	}
	s.Calls = svc
	s.closers = append(s.closers, svc.Close)
	s.workers = append(s.workers, svc.Workers()...)
	return nil
}

// openConversations builds the engine on the configured model, the
// knowledge base, listings and the forgery-guarded client that url tools
// are called through (the webhooks' address rules).
func (s *Set) openConversations(_ context.Context, cfg Config) error {
	model, err := llm.New(cfg.LLM)
	if err != nil {
		return err
	}
	guard := safehttp.New(safehttp.Options{AllowPrivate: cfg.Webhooks.AllowPrivate, Resolver: cfg.Webhooks.Resolver,
		MaxBody: conversations.MaxToolAnswer + 1})
	deps := conversations.Deps{Agents: s.Stores.Agents, Store: s.Stores.Conversations, Knowledge: s.KB, Tools: guard,
		Listings: s.Listings, Log: s.log, MCP: s.openMCP(cfg), Secrets: s.Stores.Secrets, Transfer: dialerTransfer{s}}
	svc, err := conversations.New(deps, conversations.Config{Model: model, ContextTokens: cfg.LLM.ContextTokens,
		TurnTimeout: cfg.LLM.TurnTimeout, ToolTimeout: cfg.LLM.ToolTimeout})
	s.Conversations = svc
	return err
}

// dialerTransfer is the calls feature's dialer as the engine's
// dial.Transferrer (LiveKit calls' transfer_call). The engine is built
// before the calls feature, whose voice loop needs it, so the dialer is
// asked for at each use.
type dialerTransfer struct{ s *Set }

func (t dialerTransfer) get() dial.Transferrer {
	if t.s.Calls == nil {
		return nil
	}
	return t.s.Calls.Transferrer()
}

func (t dialerTransfer) CanTransfer(c dial.LiveCall) bool {
	tr := t.get()
	return tr != nil && tr.CanTransfer(c)
}

func (t dialerTransfer) TransferCall(ctx context.Context, c dial.LiveCall, target string) error {
	tr := t.get()
	if tr == nil {
		return dial.ErrNotTransferable
	}
	return tr.TransferCall(ctx, c, target)
}

// openWidget builds the chat widget on the conversation engine.
func (s *Set) openWidget(_ context.Context, cfg Config) error {
	d := widget.Deps{Agents: s.Stores.Agents, Conv: s.Conversations, Store: s.Stores.Widget}
	if s.Stores.Postgres() { // several processes share the database: and the widget's limits, as the API keys'
		d.Limits = access.NewLimiter(time.Minute, s.Stores.Orgs)
		s.workers = append(s.workers, s.pruneWidgetRates)
	}
	s.Widget = widget.New(d, cfg.Widget)
	return nil
}

// openRecordings builds the recordings of voice calls and their retention worker.
func (s *Set) openRecordings(_ context.Context, cfg Config) error {
	rc := cfg.Recordings
	rc.Log = s.log
	svc, err := recordings.New(rc)
	if err != nil {
		return err
	}
	s.Recordings = svc
	s.workers = append(s.workers, svc.Run)
	return nil
}

// dbGauges is what the metrics' store collector reads, from the stores that
// hold it.
type dbGauges struct{ s *storage.Stores }

func (g dbGauges) CallsInFlight(ctx context.Context) (map[string]int, error) {
	return g.s.Calls.CallsInFlight(ctx)
}

func (g dbGauges) KBBacklogByStatus(ctx context.Context) (map[string]int, error) {
	return g.s.KB.KBBacklogByStatus(ctx)
}

func (g dbGauges) PoolStats() map[string]sql.DBStats { return g.s.PoolStats() }
