package recordings_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/app/recordings"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/wav"
)

func newService(t *testing.T, cfg recordings.Config) (*recordings.Service, string) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "recordings")
	}
	s, err := recordings.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, cfg.Dir
}

func frame(v int16) []int16 {
	f := make([]int16, 160)
	for i := range f {
		f[i] = v
	}
	return f
}

// A call's two sides land in one stereo WAV: caller left, agent right,
// silence on the right where the agent said nothing; 0600 in a 0700 folder.
func TestStereoLayoutAndModes(t *testing.T) {
	s, dir := newService(t, recordings.Config{})
	f, err := s.Start("org_a", "call_1")
	if err != nil {
		t.Fatal(err)
	}
	f.RecordFrame(frame(1000), nil)
	f.RecordFrame(frame(2000), frame(-3000))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f.RecordFrame(frame(1), frame(1)) // after Close: ignored, no panic
	p := filepath.Join(dir, "org_a", "call_1.wav")
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file %v %v", st.Mode(), err)
	}
	for _, d := range []string{dir, filepath.Dir(p)} {
		if st, _ := os.Stat(d); st.Mode().Perm() != 0o700 {
			t.Fatalf("folder %s is %v", d, st.Mode().Perm())
		}
	}
	r, size, err := s.Open(context.Background(), "org_a", "call_1")
	if err != nil || size != 44+4*320 {
		t.Fatalf("open: %d %v", size, err)
	}
	defer r.Close()
	pcm, fm, err := wav.ReadAll(r)
	if err != nil || fm != recordings.Format || len(pcm) != 2*320 {
		t.Fatalf("%v %v %d", err, fm, len(pcm))
	}
	if pcm[0] != 1000 || pcm[1] != 0 || pcm[320] != 2000 || pcm[321] != -3000 || pcm[639] != -3000 {
		t.Fatalf("layout: %v %v %v %v", pcm[0], pcm[1], pcm[320], pcm[321])
	}
}

// Another organization's recording, or one that does not exist, is not
// found; ids cannot climb out of the folder.
func TestOpenIsOrganizationScoped(t *testing.T) {
	s, _ := newService(t, recordings.Config{})
	f, _ := s.Start("org_a", "call_1")
	f.RecordFrame(frame(1), nil)
	f.Close()
	for _, c := range [][2]string{{"org_b", "call_1"}, {"org_a", "call_2"}, {"org_a", "../org_a/call_1"}, {"..", "call_1"}} {
		if _, _, err := s.Open(context.Background(), c[0], c[1]); !errs.Is(err, errs.NotFound) {
			t.Errorf("%v: %v, want not found", c, err)
		}
	}
	if !s.Has("org_a", "call_1") || s.Has("org_b", "call_1") {
		t.Fatal("Has")
	}
	if _, err := s.Start("org_a", "../x"); err == nil {
		t.Fatal("started a recording outside the folder")
	}
}

// RecordFrame never waits on the disk: with a queue of one frame, frames
// that do not fit are dropped and written as silence, so the recording
// keeps the call's length.
func TestRecordFrameNeverBlocks(t *testing.T) {
	s, _ := newService(t, recordings.Config{Buffer: 1})
	f, err := s.Start("org_a", "call_1")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 5000; i++ {
		f.RecordFrame(frame(int16(i)), frame(1))
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("5000 frames took %v", d)
	}
	f.Close()
	r, _, err := s.Open(context.Background(), "org_a", "call_1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pcm, _, _ := wav.ReadAll(r)
	if len(pcm) != 5000*320 {
		t.Fatalf("%d samples, want %d (the call's length)", len(pcm), 5000*320)
	}
	t.Logf("dropped %d of 5000 frames", s.Dropped())
}

// The worker deletes recordings older than the retention and keeps the
// others, and stops when its context ends.
func TestRetention(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s, dir := newService(t, recordings.Config{Retention: 30 * 24 * time.Hour, Sweep: 10 * time.Millisecond, Now: func() time.Time { return now }})
	for _, id := range []string{"old", "new"} {
		f, _ := s.Start("org_a", id)
		f.RecordFrame(frame(1), nil)
		f.Close()
	}
	old := filepath.Join(dir, "org_a", "old.wav")
	os.Chtimes(old, now.Add(-31*24*time.Hour), now.Add(-31*24*time.Hour))
	os.Chtimes(filepath.Join(dir, "org_a", "new.wav"), now.Add(-29*24*time.Hour), now.Add(-29*24*time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	testkit.Within(5*time.Second, func() bool { return s.Deleted() != 0 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the worker did not stop")
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) || s.Deleted() != 1 {
		t.Fatalf("old recording: %v, deleted %d", err, s.Deleted())
	}
	if !s.Has("org_a", "new") {
		t.Fatal("a recording within the retention was deleted")
	}
}

func TestOff(t *testing.T) {
	s, err := recordings.New(recordings.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start("org_a", "c"); !errors.Is(err, recordings.ErrOff) {
		t.Fatal(err)
	}
	if _, _, err := s.Open(context.Background(), "org_a", "c"); !errs.Is(err, errs.NotFound) {
		t.Fatal(err)
	}
	var _ io.Closer = (*recordings.File)(nil)
}

// Closing while the media clock still records is safe (go test -race).
func TestCloseWhileRecording(t *testing.T) {
	s, _ := newService(t, recordings.Config{})
	f, err := s.Start("org_a", "call_1")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wrote atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				f.RecordFrame(frame(1), frame(2))
				wrote.Add(1)
			}
		}
	}()
	testkit.Eventually(t, 5*time.Second, func() bool { return wrote.Load() >= 50 }, "frames recorded before Close")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	r, _, err := s.Open(context.Background(), "org_a", "call_1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := wav.ReadAll(r); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultDir(t *testing.T) {
	if got := recordings.DefaultDir("/var/lib/agentd/agentd.db"); got != "/var/lib/agentd/recordings" {
		t.Fatal(got)
	}
	if got := recordings.DefaultDir("postgres://u:p@h/db"); got != "" {
		t.Fatalf("PostgreSQL: %q", got)
	}
}
