// Package recordings keeps each voice call's audio as a WAV file: stereo,
// 8 kHz, the caller on the left channel and the agent on the right, in
// <dir>/<organization>/<call>.wav (by default dir is "recordings" beside
// the SQLite database). Files are 0600 and folders 0700: a recording is
// the most personal data agentd holds. A worker deletes recordings older
// than the retention.
package recordings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/wav"
	"github.com/agentd/agentd/storage/sqldb"
)

// Format is every recording's: stereo at the calls' 8 kHz.
var Format = wav.Format{Rate: 8000, Channels: 2}

// Config sets where recordings live and how long they stay.
type Config struct {
	Dir       string        // the folder of recordings; "" turns recording off
	Retention time.Duration // files older than this are deleted; 0 keeps them
	Sweep     time.Duration // how often the worker looks (0: 1 h); tests shorten it
	Buffer    int           // frames queued per call before frames drop (0: 250, 5 s)
	Log       *slog.Logger
	Now       func() time.Time // nil: time.Now
}

// Service starts, opens and expires recordings.
type Service struct {
	cfg     Config
	deleted atomic.Int64
	dropped atomic.Int64
}

// ErrOff is Start when recording is off (no folder).
var ErrOff = errors.New("recordings are off")

// New checks the folder (created 0700 when missing).
func New(cfg Config) (*Service, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = time.Hour
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 250
	}
	if cfg.Retention < 0 {
		return nil, errors.New("--recording-retention must not be negative")
	}
	return &Service{cfg: cfg}, nil
}

// Enabled is whether calls are recorded at all.
func (s *Service) Enabled() bool { return s != nil && s.cfg.Dir != "" }

// Deleted is how many recordings the retention worker has deleted.
func (s *Service) Deleted() int64 { return s.deleted.Load() }

// Dropped is how many 20 ms frames were lost because a disk was too slow
// (replaced by silence, so the two sides stay aligned).
func (s *Service) Dropped() int64 { return s.dropped.Load() }

// ids are what agentd generates: a path made of anything else is refused.
var ids = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func (s *Service) path(orgID, callID string) (string, bool) {
	if !s.Enabled() || !ids.MatchString(orgID) || !ids.MatchString(callID) {
		return "", false
	}
	return filepath.Join(s.cfg.Dir, orgID, callID+".wav"), true
}

// Start begins the recording of a call (replacing an earlier one of the
// same call). The File records from the media's clock and must be Closed.
func (s *Service) Start(orgID, callID string) (*File, error) {
	if !s.Enabled() {
		return nil, ErrOff
	}
	p, ok := s.path(orgID, callID)
	if !ok {
		return nil, fmt.Errorf("recording %q/%q: not an id", orgID, callID)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil { // an older file of another mode
		f.Close()
		return nil, err
	}
	w, err := wav.NewWriter(f, Format)
	if err != nil {
		f.Close()
		return nil, err
	}
	rf := &File{svc: s, f: f, w: w, path: p, frames: make(chan []int16, s.cfg.Buffer), done: make(chan struct{})}
	go rf.write()
	return rf, nil
}

// Open reads a call's recording in the caller's organization; a call of
// another organization, or without a recording, is not found.
func (s *Service) Open(ctx context.Context, orgID, callID string) (io.ReadSeekCloser, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	p, ok := s.path(orgID, callID)
	if !ok {
		return nil, 0, errs.New(errs.NotFound, "recording not found")
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, errs.New(errs.NotFound, "recording not found")
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, errs.New(errs.NotFound, "recording not found")
	}
	return f, st.Size(), nil
}

// Has is whether the call has a recording in the organization.
func (s *Service) Has(orgID, callID string) bool {
	p, ok := s.path(orgID, callID)
	if !ok {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// File is one call's recording being written. RecordFrame never blocks
// (the media clock calls it every 20 ms): frames go through a buffered
// channel to a writer goroutine, and when the disk falls behind they are
// counted and written as silence later, keeping the sides in time.
type File struct {
	svc    *Service
	f      *os.File
	w      *wav.Writer
	path   string
	frames chan []int16
	done   chan struct{}
	mu     sync.RWMutex
	closed bool
	gap    atomic.Int64 // frames dropped since the last one queued
	pool   sync.Pool
	err    error
}

// RecordFrame records one 20 ms tick: the caller's frame (left) and the
// agent's frame sent in the same tick (right; nil when silent).
func (r *File) RecordFrame(caller, agent []int16) {
	n := max(len(caller), len(agent))
	if n == 0 {
		return
	}
	buf, _ := r.pool.Get().([]int16)
	if cap(buf) < 2*n {
		buf = make([]int16, 2*n)
	}
	buf = buf[:2*n]
	for i := 0; i < n; i++ {
		var c, a int16
		if i < len(caller) {
			c = caller[i]
		}
		if i < len(agent) {
			a = agent[i]
		}
		buf[2*i], buf[2*i+1] = c, a
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return
	}
	select {
	case r.frames <- buf:
	default:
		r.gap.Add(int64(n))
		r.svc.dropped.Add(1)
	}
}

func (r *File) write() {
	defer close(r.done)
	silence := make([]int16, 2*160)
	for buf := range r.frames {
		if r.err != nil {
			continue // keep draining: RecordFrame must not block
		}
		for gap := r.gap.Swap(0); gap > 0 && r.err == nil; gap -= 160 {
			r.err = r.w.Write(silence[:2*min(gap, 160)])
		}
		if r.err == nil {
			r.err = r.w.Write(buf)
		}
		r.pool.Put(buf[:0]) //nolint:staticcheck // a slice header is fine here
	}
	for gap := r.gap.Swap(0); gap > 0 && r.err == nil; gap -= 160 {
		r.err = r.w.Write(silence[:2*min(gap, 160)])
	}
}

// Close writes what is queued, fixes the WAV's sizes and closes the file.
func (r *File) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return nil
	}
	r.closed = true
	close(r.frames)
	r.mu.Unlock()
	<-r.done
	err := r.err
	if err == nil {
		err = r.w.Close()
	}
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.svc.cfg.Log.Warn("recording", "file", r.path, "err", err)
	}
	return err
}

// Run deletes recordings older than the retention, at once and then every
// Sweep, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	if !s.Enabled() || s.cfg.Retention == 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(s.cfg.Sweep)
	defer t.Stop()
	for {
		s.Expire(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Expire deletes the recordings older than the retention once and returns
// how many it deleted.
func (s *Service) Expire(ctx context.Context) int {
	if !s.Enabled() || s.cfg.Retention == 0 {
		return 0
	}
	cutoff := s.cfg.Now().Add(-s.cfg.Retention)
	n := 0
	filepath.WalkDir(s.cfg.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !strings.HasSuffix(p, ".wav") {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(p); err != nil {
			s.cfg.Log.Warn("deleting an expired recording", "file", p, "err", err)
			return nil
		}
		n++
		return nil
	})
	if n > 0 {
		s.deleted.Add(int64(n))
		s.cfg.Log.Info("deleted expired recordings", "count", n, "older_than", cutoff.UTC().Format(time.RFC3339))
	}
	return n
}

// DefaultDir is where recordings live when --recording-dir is not given:
// "recordings" beside the SQLite database; "" (off) on PostgreSQL, whose
// processes share no folder.
func DefaultDir(dbPath string) string {
	if dbPath == "" || sqldb.IsPostgresURL(dbPath) {
		return ""
	}
	return filepath.Join(filepath.Dir(dbPath), "recordings")
}
