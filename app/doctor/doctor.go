// Package doctor checks an agentd installation before it goes live, the
// way agentd serve would use it: configuration, database, disk, dialer,
// embedder and clock. It changes nothing: the database is read, never
// created or migrated; the dialer gets one OPTIONS or one ListRooms; the
// embedder embeds one short text.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/app/voice/speech"
	"github.com/agentd/agentd/dial/livekitdial"
	"github.com/agentd/agentd/dial/sipdial"
	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/storage/sqldb"
)

// Status is a check's verdict. Only Fail makes the doctor fail: Warn is
// worth reading, Skip means the check could not apply.
type Status string

// The verdicts.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is one line of the report.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Report is every check in order; OK is false when any failed.
type Report struct {
	OK     bool     `json:"ok"`
	Checks []Result `json:"checks"`
}

// Failed counts the failed checks.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == Fail {
			n++
		}
	}
	return n
}

// Input is what the doctor checks: the settings serve would run with.
type Input struct {
	// ConfigErr is the result of the same validation serve runs first
	// (app.Config.Validate and the flag checks); nil when valid.
	ConfigErr error
	DBPath    string
	// Inspect reads the migration state of the SQLite file at path,
	// creating nothing (storage.InspectFile, passed by cmd's door).
	Inspect func(ctx context.Context, path string) (sqldb.FileState, error)
	Dialer  string // none, sim, sip, livekit
	SIP     sipdial.Config
	LiveKit livekitdial.LiveKitConfig
	// Embedder is the configured embedder, or EmbedderErr why it could not
	// be built.
	Embedder    embed.Embedder
	EmbedderErr error
	// Reranker is the configured reranker (nil: none), or RerankerErr why
	// it could not be built.
	Reranker    embed.Reranker
	RerankerErr error
	// Model is the configured chat model (nil: builtin), or ModelErr why
	// it could not be built.
	Model    llm.Model
	ModelErr error
	// STT and TTS are the speech services (nil: none), or the errors why
	// they could not be built.
	STT            *speech.STT
	TTS            *speech.TTS
	STTErr, TTSErr error
	// MCP probes the MCP servers agents use (nil: not checked): how many
	// answered, and a line per one that did not.
	MCP func(ctx context.Context) (ok int, failed []string, err error)
	Now func() time.Time // nil: time.Now
}

// Thresholds of the disk and clock checks.
const (
	MinFreeBytes  = 100 << 20 // below this the disk check fails
	WarnFreeBytes = 1 << 30   // below this (or twice the database) it warns
	MaxSkew       = 30 * time.Second
	WarnSkew      = 5 * time.Second
	checkTimeout  = 30 * time.Second
)

// run is the state shared by the checks of one Run.
type run struct {
	in         Input
	now        func() time.Time
	state      sqldb.FileState
	haveState  bool
	serverTime time.Time // the LiveKit server's clock, when probed
}

// Run runs every check in order and returns the report.
func Run(ctx context.Context, in Input) Report {
	r := &run{in: in, now: in.Now}
	if r.now == nil {
		r.now = time.Now
	}
	checks := []struct {
		name string
		fn   func(context.Context) (Status, string)
	}{
		{"config", r.config}, {"database", r.database}, {"integrity", r.integrity}, {"disk", r.disk},
		{"dialer", r.dialer}, {"embedder", r.embedder}, {"reranker", r.reranker}, {"model", r.model},
		{"speech-to-text", r.stt}, {"text-to-speech", r.tts}, {"clock", r.clock}, {"mcp", r.mcp},
	}
	rep := Report{OK: true}
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		st, detail := c.fn(cctx)
		cancel()
		rep.Checks = append(rep.Checks, Result{Check: c.name, Status: st, Detail: detail})
		rep.OK = rep.OK && st != Fail
	}
	return rep
}

func (r *run) config(context.Context) (Status, string) {
	if r.in.ConfigErr != nil {
		return Fail, oneLine(r.in.ConfigErr)
	}
	return OK, "every flag and variable is valid (the check serve runs before it touches the database)"
}

func (r *run) database(ctx context.Context) (Status, string) {
	if sqldb.IsPostgresURL(r.in.DBPath) {
		// The URL may hold a password: never echo it.
		return Skip, "PostgreSQL: the database, integrity and disk checks read SQLite files; serve applies migrations at its start (use pg_isready and the server's own tools)"
	}
	st, err := r.in.Inspect(ctx, r.in.DBPath)
	if errors.Is(err, os.ErrNotExist) {
		return Warn, fmt.Sprintf("%s does not exist yet: the first serve creates it", r.in.DBPath)
	}
	if err != nil {
		return Fail, oneLine(err)
	}
	r.state, r.haveState = st, true
	switch {
	case len(st.Newer) > 0:
		return Fail, fmt.Sprintf("%s was migrated by a newer agentd (unknown migrations %v): run that version", r.in.DBPath, st.Newer)
	case len(st.Pending) > 0:
		return Warn, fmt.Sprintf("%s: %d migrations pending (%s); serve applies them at its start", r.in.DBPath, len(st.Pending), strings.Join(st.Pending, ", "))
	}
	return OK, fmt.Sprintf("%s: all %d migrations applied", r.in.DBPath, len(st.Applied))
}

func (r *run) integrity(ctx context.Context) (Status, string) {
	if sqldb.IsPostgresURL(r.in.DBPath) {
		return Skip, "PostgreSQL: PRAGMA integrity_check is SQLite's"
	}
	if !r.haveState {
		return Skip, "no database to check"
	}
	if err := sqldb.CheckFile(ctx, r.in.DBPath); err != nil {
		return Fail, oneLine(err)
	}
	return OK, "PRAGMA integrity_check: ok"
}

func (r *run) disk(context.Context) (Status, string) {
	if sqldb.IsPostgresURL(r.in.DBPath) {
		return Skip, "PostgreSQL: disk space is the database server's"
	}
	dir := filepath.Dir(r.in.DBPath)
	free, err := freeBytes(dir)
	if err != nil {
		return Skip, oneLine(err)
	}
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(r.in.DBPath + suffix); err == nil {
			size += st.Size()
		}
	}
	msg := fmt.Sprintf("%s free in %s (database %s)", bytesString(free), dir, bytesString(uint64(size)))
	switch {
	case free < MinFreeBytes:
		return Fail, msg + ": writes will fail soon"
	case free < WarnFreeBytes || free < 2*uint64(size):
		return Warn, msg + ": a backup or VACUUM needs as much again as the database"
	}
	return OK, msg
}

func (r *run) dialer(ctx context.Context) (Status, string) {
	switch r.in.Dialer {
	case "", "none":
		return Warn, "--dialer none: outbound calls answer 'telephony service not configured' (chat-only is fine)"
	case "sim":
		return Warn, "--dialer sim: calls are simulated, no phone rings"
	case "sip":
		p, err := sipdial.ProbeTrunk(ctx, r.in.SIP)
		if err != nil {
			return Fail, oneLine(err)
		}
		msg := fmt.Sprintf("trunk %s answered OPTIONS with %d %s in %s", r.in.SIP.Trunk, p.Status, p.Reason, p.RTT.Round(time.Millisecond))
		if p.Server != "" {
			msg += " (" + p.Server + ")"
		}
		switch {
		case p.Status >= 500:
			return Fail, msg
		case (p.Status == 401 || p.Status == 407) && r.in.SIP.Password == "":
			return Warn, msg + ": it wants authentication; set --sip-username and --sip-password"
		case p.Status >= 400:
			return Warn, msg
		}
		return OK, msg
	case "livekit":
		p, err := livekitdial.ProbeLiveKit(ctx, r.in.LiveKit)
		r.serverTime = p.ServerTime
		if livekitdial.LiveKitUnauthenticated(err) {
			return Fail, oneLine(err) + ": check --livekit-api-key and --livekit-api-secret"
		}
		if err != nil {
			return Fail, oneLine(err)
		}
		return OK, fmt.Sprintf("%s: credentials accepted (ListRooms: %d rooms, %s), outbound trunk %s found",
			r.in.LiveKit.URL, p.Rooms, p.RTT.Round(time.Millisecond), r.in.LiveKit.OutboundTrunkID)
	}
	return Fail, fmt.Sprintf("--dialer %q: use none, sim, sip or livekit", r.in.Dialer)
}

func (r *run) embedder(ctx context.Context) (Status, string) {
	if r.in.EmbedderErr != nil {
		return Fail, oneLine(r.in.EmbedderErr)
	}
	e := r.in.Embedder
	if e == nil {
		return Skip, "no embedder configured"
	}
	start := time.Now()
	vs, err := e.Embed(ctx, []string{"agentd doctor: one short text to embed"})
	took := time.Since(start).Round(10 * time.Microsecond)
	if err != nil {
		return Fail, fmt.Sprintf("%s %s: %s", e.Name(), e.Model(), oneLine(err))
	}
	if len(vs) != 1 || len(vs[0]) != e.Dimensions() {
		return Fail, fmt.Sprintf("%s %s: got %d vectors, want 1 of %d dimensions", e.Name(), e.Model(), len(vs), e.Dimensions())
	}
	return OK, fmt.Sprintf("%s %s: one text embedded in %s (%d dimensions)", e.Name(), e.Model(), took, e.Dimensions())
}

// reranker asks the configured reranker to order two short texts.
func (r *run) reranker(ctx context.Context) (Status, string) {
	if r.in.RerankerErr != nil {
		return Fail, oneLine(r.in.RerankerErr)
	}
	rr := r.in.Reranker
	if rr == nil {
		return Skip, "no reranker configured (--rerank none): hybrid search keeps its own order"
	}
	start := time.Now()
	scores, err := rr.Rerank(ctx, "opening hours", []string{"The clinic opens at 8.", "Parking is free."})
	if err != nil {
		return Fail, fmt.Sprintf("%s: %s (searches keep the hybrid order and say the reranker was skipped)", rr.Name(), oneLine(err))
	}
	return OK, fmt.Sprintf("%s: two texts scored in %s (%.3f, %.3f)", rr.Name(), time.Since(start).Round(10*time.Microsecond), scores[0], scores[1])
}

// model asks the configured chat model for a one-word answer.
func (r *run) model(ctx context.Context) (Status, string) {
	if r.in.ModelErr != nil {
		return Fail, oneLine(r.in.ModelErr)
	}
	m := r.in.Model
	if m == nil {
		return OK, "builtin: answers quote the knowledge base; nothing is generated, no model is called"
	}
	start := time.Now()
	resp, err := m.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "Reply with the single word OK."}}}, nil)
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		return Fail, fmt.Sprintf("%s: %s", m.Name(), oneLine(err))
	}
	return OK, fmt.Sprintf("%s: answered %q in %s", m.Name(), truncate(resp.Content, 40), took)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// clock checks what agentd's own timekeeping depends on, without NTP: the
// clock is set (not before 2024), it is not behind the newest time stored
// in the database (a clock set back reorders calls, revives expired keys
// and steals dial leases), and, with LiveKit, it agrees with the server's
// (tokens are signed with our time and refused outside the server's leeway).
func (r *run) clock(context.Context) (Status, string) {
	now := r.now()
	if now.Year() < 2024 {
		return Fail, fmt.Sprintf("the clock reads %s: it is not set", now.UTC().Format(time.RFC3339))
	}
	var notes []string
	st := OK
	if r.haveState && !r.state.NewestWrite.IsZero() {
		if ahead := r.state.NewestWrite.Sub(now); ahead > time.Minute {
			return Fail, fmt.Sprintf("the database holds a time %s ahead of this clock (%s): was the clock set back, or the file copied from a machine whose clock runs ahead?",
				ahead.Round(time.Second), r.state.NewestWrite.Format(time.RFC3339))
		}
		notes = append(notes, "not behind the newest stored time")
	}
	if !r.serverTime.IsZero() {
		skew := now.Sub(r.serverTime)
		msg := fmt.Sprintf("%s from the LiveKit server's", skew.Round(time.Second))
		switch {
		case skew.Abs() > MaxSkew:
			return Fail, msg + ": its tokens will be refused; sync the clocks (NTP)"
		case skew.Abs() > WarnSkew:
			st = Warn
		}
		notes = append(notes, msg)
	}
	if len(notes) == 0 {
		notes = append(notes, "set")
	}
	return st, now.UTC().Format(time.RFC3339) + ": " + strings.Join(notes, "; ")
}

// oneLine keeps a multi-line error on one table row.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

func bytesString(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
