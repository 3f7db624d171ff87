package amd

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/wav"
)

// The detection set: what answers an outbound call in its first seconds,
// made with espeak-ng (three voices, two speeds) and sox's tones, over a
// quiet line: people saying a word or a short sentence and waiting,
// machines' greetings with and without a beep, a beep alone, silence.
var (
	humanShort = []string{"Hello?", "Hi.", "Yes?", "Hello.", "Yeah, hello?", "Who is this?", "Speaking."}
	humanLong  = []string{"Hello, this is Sarah.", "Good morning, Peter speaking.", "Hi, Tom here.", "Hello, Jones residence.",
		"Hello, Maria speaking.", "Hi there, this is Dave."}
	machineGreetings = []string{
		"Hi, you have reached John Smith. I am not available right now, please leave a message after the tone.",
		"Hello, this is Anna. I can't take your call at the moment. Leave your name and number and I will call you back.",
		"The person you are calling is not available. Please record your message after the tone.",
		"Thanks for calling the Miller family. We are not home right now, so leave a message and we will get back to you.",
		"You have reached the voicemail of extension two four five. Please leave a message.",
		"Hi, it's Mike. Sorry I missed you. Leave a message.",
	}
	voices = []struct {
		name  string
		speed int
	}{{"en-us", 175}, {"en", 160}, {"en-us+f3", 190}}
	beeps = []float64{1000, 1400, 2000}
)

// sample is one answer and the verdict it should get.
type sample struct {
	name string
	want string
	pcm  []int16
}

var (
	setOnce sync.Once
	set     []sample
	setErr  error
)

// detectionSet builds the set once per test binary.
func detectionSet(t testing.TB) []sample {
	t.Helper()
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (CI installs it)", tool)
		}
	}
	setOnce.Do(func() { set, setErr = buildSet() })
	if setErr != nil {
		t.Fatal(setErr)
	}
	return set
}

func buildSet() ([]sample, error) {
	dir, err := os.MkdirTemp("", "amdset")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rnd := rand.New(rand.NewPCG(37, 1))
	n := 0
	file := func() string { n++; return filepath.Join(dir, strconv.Itoa(n)+".wav") }
	speak := func(text, voice string, speed int) ([]int16, error) {
		raw, out := file(), file()
		if b, err := exec.Command("espeak-ng", "-v", voice, "-s", strconv.Itoa(speed), "-w", raw, "--", text).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("espeak-ng: %v %s", err, b)
		}
		if b, err := exec.Command("sox", raw, "-r", "8000", "-c", "1", "-b", "16", out).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sox: %v %s", err, b)
		}
		return readWAV(out)
	}
	tone := func(hz float64, d time.Duration) ([]int16, error) {
		out := file()
		if b, err := exec.Command("sox", "-n", "-r", "8000", "-c", "1", "-b", "16", out, "synth",
			strconv.FormatFloat(d.Seconds(), 'f', 3, 64), "sine", strconv.FormatFloat(hz, 'f', 0, 64), "vol", "0.4").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sox: %v %s", err, b)
		}
		return readWAV(out)
	}
	// line: a lead-in of quiet, the parts at a random level, quiet after.
	line := func(after time.Duration, parts ...[]int16) []int16 {
		gain := 0.4 + 0.6*rnd.Float64()
		out := quiet(rnd, time.Duration(200+rnd.IntN(500))*time.Millisecond)
		for _, p := range parts {
			for _, v := range p {
				out = append(out, int16(float64(v)*gain)+int16(rnd.IntN(41)-20))
			}
		}
		return append(out, quiet(rnd, after)...)
	}
	var s []sample
	for _, v := range voices {
		for _, texts := range [][]string{humanShort, humanLong} {
			for _, text := range texts {
				pcm, err := speak(text, v.name, v.speed)
				if err != nil {
					return nil, err
				}
				s = append(s, sample{fmt.Sprintf("human %s %q", v.name, text), Human, line(4*time.Second, pcm)})
			}
		}
		for i, text := range machineGreetings {
			pcm, err := speak(text, v.name, v.speed)
			if err != nil {
				return nil, err
			}
			s = append(s, sample{fmt.Sprintf("machine %s %q", v.name, text), Machine, line(3*time.Second, pcm)})
			hz := beeps[(i+len(s))%len(beeps)]
			beep, err := tone(hz, time.Duration(400+rnd.IntN(600))*time.Millisecond)
			if err != nil {
				return nil, err
			}
			gap := quiet(rnd, time.Duration(300+rnd.IntN(500))*time.Millisecond)
			s = append(s, sample{fmt.Sprintf("machine+beep %.0f Hz %s %q", hz, v.name, text), Machine, line(3*time.Second, pcm, gap, beep)})
		}
	}
	for _, hz := range beeps {
		beep, err := tone(hz, 700*time.Millisecond)
		if err != nil {
			return nil, err
		}
		s = append(s, sample{fmt.Sprintf("beep alone %.0f Hz", hz), Machine, line(3*time.Second, beep)})
	}
	for range 4 {
		s = append(s, sample{"silence", Unknown, line(5 * time.Second)})
	}
	return s, nil
}

func quiet(rnd *rand.Rand, d time.Duration) []int16 {
	out := make([]int16, int(d.Seconds()*rate))
	for i := range out {
		out[i] = int16(rnd.IntN(41) - 20) // a quiet line, about -64 dBFS
	}
	return out
}

func readWAV(path string) ([]int16, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pcm, _, err := wav.ReadAll(f)
	return pcm, err
}

// run feeds a sample frame by frame until the detector decides.
func run(pcm []int16) (Decision, bool) {
	d := New(Config{})
	for i := 0; i+frameSamples <= len(pcm); i += frameSamples {
		if dec, ok := d.Push(pcm[i : i+frameSamples]); ok {
			return dec, true
		}
	}
	return Decision{}, false
}

// score runs the whole set: accuracy and the median decision time.
func score(tb testing.TB, s []sample, log bool) (accuracy float64, median time.Duration) {
	right := 0
	var at []time.Duration
	for _, x := range s {
		dec, ok := run(x.pcm)
		if !ok {
			dec.Verdict, dec.At = "none", time.Duration(len(x.pcm))*time.Second/rate
		}
		if dec.Verdict == x.want {
			right++
		} else if log {
			tb.Logf("wrong: %s: %s (%s, greeting %v) at %v", x.name, dec.Verdict, dec.Reason, dec.Greeting, dec.At)
		}
		at = append(at, dec.At)
	}
	slices.Sort(at)
	return float64(right) / float64(len(s)), at[len(at)/2]
}

// The set's accuracy is at least 95% and the median decision comes
// within 3 s of the answer.
func TestDetectionSet(t *testing.T) {
	s := detectionSet(t)
	acc, med := score(t, s, true)
	t.Logf("%d answers: accuracy %.1f%%, median decision %v after the answer", len(s), 100*acc, med)
	if acc < 0.95 || med > 3*time.Second {
		t.Errorf("accuracy %.1f%%, median decision %v: want >= 95%% within 3 s", 100*acc, med)
	}
	// The beep detector hears every beep, and none in speech.
	for _, x := range s {
		d := New(Config{})
		for i := 0; i+frameSamples <= len(x.pcm); i += frameSamples {
			d.Push(x.pcm[i : i+frameSamples])
		}
		if beep := strings.Contains(x.name, "beep"); d.BeepEnded() != beep {
			t.Errorf("%s: beep heard %v", x.name, d.BeepEnded())
		}
	}
}

func TestMachinePhrase(t *testing.T) {
	for text, want := range map[string]bool{
		"Hi, you've reached Sam, please leave a message.": true, "I CAN'T TAKE YOUR CALL right now": true,
		"The mailbox is full.": true, "Hello, this is Sam.": false, "Yes? Who's calling?": false, "": false,
	} {
		if MachinePhrase(text) != want {
			t.Errorf("MachinePhrase(%q) = %v", text, !want)
		}
	}
}

// Any audio, however hostile, gets a verdict of the three within the
// limits, without a panic.
func FuzzDetector(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, uint8(10))
	f.Add(make([]byte, 320), uint8(200))
	f.Fuzz(func(t *testing.T, b []byte, repeat uint8) {
		// Short limits keep each input quick; the rules decide by
		// MaxSilence + MaxGreeting + Pause (600 ms, 30 frames).
		d := New(Config{MaxSilence: 300 * time.Millisecond, MaxGreeting: 200 * time.Millisecond, Pause: 100 * time.Millisecond})
		pcm := make([]int16, frameSamples)
		for n := 0; n < int(repeat)/4+32; n++ {
			for i := range pcm {
				if len(b) > 1 {
					j := (2 * (n*frameSamples + i)) % (len(b) - 1)
					pcm[i] = int16(uint16(b[j]) | uint16(b[j+1])<<8)
				}
			}
			d.Push(pcm)
		}
		dec, ok := d.Push(pcm)
		if !ok || (dec.Verdict != Human && dec.Verdict != Machine && dec.Verdict != Unknown) {
			t.Fatalf("after %d frames: %+v %v", int(repeat)/4+33, dec, ok)
		}
	})
}

// BenchmarkDetectionSet reports the set's figures (the README's) and the
// detector's cost per 20 ms frame.
func BenchmarkDetectionSet(b *testing.B) {
	s := detectionSet(b)
	acc, med := score(b, s, false)
	b.ResetTimer()
	for b.Loop() {
		for _, x := range s {
			run(x.pcm)
		}
	}
	b.ReportMetric(100*acc, "accuracy-%")
	b.ReportMetric(float64(med.Milliseconds()), "median-decision-ms")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(s)), "ns/answer")
}
