package voice

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit"
)

// testMedia is an in-memory call transport on a real 20 ms clock, as
// dial/media's: every tick it hands the loop one caller frame (the fed
// speech, else a quiet line) and sends one frame of the agent's queue,
// logging both.
type testMedia struct {
	in     chan dial.Input
	stop   chan struct{}
	closed sync.Once

	mu     sync.Mutex
	feed   [][]int16
	queue  []int16
	sent   int64
	tick   int64
	caller [][]int16 // every caller frame delivered, by tick
	agent  []float64 // the agent's frame energy, by tick (0: silent)
	rec    dial.Recorder
	clears int
	noise  *rand.Rand
	keys   string // digits sent (send_dtmf)
	keysAt int64  // agent samples sent when they were
}

func newTestMedia(t testing.TB) *testMedia {
	m := &testMedia{in: make(chan dial.Input, 1024), stop: make(chan struct{}), noise: rand.New(rand.NewPCG(1, 2))}
	go m.run()
	t.Cleanup(m.Close)
	return m
}

func (m *testMedia) run() {
	tk := time.NewTicker(dial.FrameDuration)
	defer tk.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tk.C:
		}
		m.mu.Lock()
		var f []int16
		if len(m.feed) > 0 {
			f, m.feed = m.feed[0], m.feed[1:]
		} else {
			f = make([]int16, dial.FrameSamples)
			for i := range f {
				f[i] = int16(m.noise.IntN(61) - 30) // a quiet line, about -60 dBFS
			}
		}
		var out []int16
		if len(m.queue) >= dial.FrameSamples {
			out, m.queue = m.queue[:dial.FrameSamples:dial.FrameSamples], m.queue[dial.FrameSamples:]
			m.sent += dial.FrameSamples
		}
		m.caller = append(m.caller, f)
		m.agent = append(m.agent, rms(out))
		m.tick++
		if m.rec != nil {
			m.rec.RecordFrame(f, out)
		}
		m.mu.Unlock()
		select {
		case m.in <- dial.Input{PCM: f}:
		default:
		}
	}
}

func (m *testMedia) Read(ctx context.Context) (dial.Input, error) {
	select {
	case in := <-m.in:
		return in, nil
	case <-m.stop:
		return dial.Input{}, io.EOF
	case <-ctx.Done():
		return dial.Input{}, ctx.Err()
	}
}

func (m *testMedia) Write(pcm []int16) error {
	m.mu.Lock()
	m.queue = append(m.queue, pcm...)
	m.mu.Unlock()
	return nil
}

func (m *testMedia) Clear() {
	m.mu.Lock()
	m.queue = m.queue[:0]
	m.clears++
	m.mu.Unlock()
}

func (m *testMedia) Sent() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent
}

func (m *testMedia) SendDigits(_ context.Context, digits string) error {
	m.mu.Lock()
	m.keys += digits
	m.keysAt = m.sent
	m.mu.Unlock()
	return nil
}

func (m *testMedia) Record(rec dial.Recorder) {
	m.mu.Lock()
	m.rec = rec
	m.mu.Unlock()
}

func (m *testMedia) Close() { m.closed.Do(func() { close(m.stop) }) }

// say feeds the caller's speech after what is already fed.
func (m *testMedia) say(pcm []int16) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 0; i < len(pcm); i += dial.FrameSamples {
		f := make([]int16, dial.FrameSamples)
		copy(f, pcm[i:min(len(pcm), i+dial.FrameSamples)])
		m.feed = append(m.feed, f)
	}
}

// press sends DTMF digits now.
func (m *testMedia) press(digits string) {
	for i := range len(digits) {
		m.in <- dial.Input{Digit: digits[i]}
	}
}

func (m *testMedia) now() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tick
}

// agentLog is the agent's energy by tick so far.
func (m *testMedia) agentLog() []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]float64(nil), m.agent...)
}

func (m *testMedia) callerLog() [][]int16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]int16(nil), m.caller...)
}

// bursts are the agent's runs of audio: [first, last] ticks, runs split
// by at least 200 ms of silence.
func bursts(log []float64) [][2]int {
	var out [][2]int
	gap := 0
	for i, e := range log {
		if e == 0 {
			gap++
			continue
		}
		if len(out) == 0 || gap >= 10 {
			out = append(out, [2]int{i, i})
		}
		out[len(out)-1][1] = i
		gap = 0
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, d, cond, "waiting for %s", what)
}

var speechCache sync.Map

// voiceOf is real speech of text made with espeak-ng and sox at 8 kHz
// (the test skips when they are missing).
func voiceOf(t testing.TB, text string) []int16 {
	t.Helper()
	if v, ok := speechCache.Load(text); ok {
		return v.([]int16)
	}
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
	dir := t.TempDir()
	wav, raw := filepath.Join(dir, "s.wav"), filepath.Join(dir, "s.raw")
	if out, err := exec.Command("espeak-ng", "-w", wav, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("sox", wav, "-r", "8000", "-c", "1", "-b", "16", "-e", "signed-integer", "-t", "raw", raw).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v %s", err, out)
	}
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, len(b)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	speechCache.Store(text, pcm)
	return pcm
}

// cough is a short loud burst of noise.
func cough(d time.Duration) []int16 {
	r := rand.New(rand.NewPCG(3, 4))
	n := int(d.Seconds() * dial.SampleRate)
	out := make([]int16, n)
	for i := range out {
		out[i] = int16((r.Float64()*2 - 1) * 12000 * math.Sin(math.Pi*float64(i)/float64(n)))
	}
	return out
}
