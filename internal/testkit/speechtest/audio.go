package speechtest

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/wav"
)

// Tone is a sine tone of hz at amplitude 8000 (about -12 dBFS), mono at rate.
func Tone(hz float64, d time.Duration, rate int) []int16 {
	n := int(d.Seconds() * float64(rate))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
	}
	return out
}

type speakKey struct {
	text string
	rate int
}

var spoken sync.Map // speakKey -> []int16: espeak-ng and sox are slow, tests repeat phrases

// Espeak is text spoken by Debian's espeak-ng, mono at rate (converted by
// sox; 0 keeps espeak-ng's own 22050 Hz). The test fails when either tool
// is missing: CI installs both.
func Espeak(t testing.TB, text string, rate int) []int16 {
	t.Helper()
	pcm, err := espeak(text, rate)
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

func espeak(text string, rate int) ([]int16, error) {
	if v, ok := spoken.Load(speakKey{text, rate}); ok {
		return v.([]int16), nil
	}
	dir, err := os.MkdirTemp("", "speechtest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	raw := filepath.Join(dir, "espeak.wav")
	if out, err := exec.Command("espeak-ng", "-w", raw, "--", text).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("espeak-ng (apt-get install espeak-ng): %v %s", err, out)
	}
	file := raw
	if rate != 0 {
		file = filepath.Join(dir, "speech.wav")
		if out, err := exec.Command("sox", raw, "-r", strconv.Itoa(rate), "-c", "1", "-b", "16", file).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sox (apt-get install sox): %v %s", err, out)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pcm, fm, err := wav.ReadAll(f)
	if err != nil || fm.Channels != 1 {
		return nil, fmt.Errorf("reading espeak-ng's speech: %v %v", err, fm)
	}
	spoken.Store(speakKey{text, rate}, pcm)
	return pcm, nil
}

// RMS is the root mean square of samples (0 for none).
func RMS(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, v := range pcm {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}
