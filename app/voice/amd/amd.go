// Package amd decides who answered an outbound call, a person or an
// answering machine, from its first seconds of audio: the greeting's
// length and the pause after it (a person says "Hello?" and waits; a
// machine talks on), a beep detector (a sustained pure tone), and, where
// a transcript of the greeting is at hand, the words machines say.
package amd

import (
	"math"
	"strings"
	"time"
)

// Verdicts.
const (
	Human   = "human"
	Machine = "machine"
	Unknown = "unknown"
)

// Audio is 8 kHz mono in 20 ms frames (dial's frames).
const (
	rate         = 8000
	frameSamples = 160
	frame        = 20 * time.Millisecond
)

// Config holds the rules' limits; zero values are the defaults.
type Config struct {
	// MaxGreeting: a greeting still going after this is a machine's
	// (default 2.4 s: people answer with a word or a short sentence).
	MaxGreeting time.Duration
	// Pause after a greeting that makes it a person's (default 800 ms:
	// the person waits for the caller to speak).
	Pause time.Duration
	// MaxSilence: nobody spoke by then: unknown (default 3 s).
	MaxSilence time.Duration
	// Beep: a pure tone this long is a machine's beep (default 160 ms).
	Beep time.Duration
}

func (c *Config) defaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxGreeting, 2400*time.Millisecond)
	def(&c.Pause, 800*time.Millisecond)
	def(&c.MaxSilence, 3*time.Second)
	def(&c.Beep, 160*time.Millisecond)
}

// Decision is the detector's verdict.
type Decision struct {
	Verdict  string
	Reason   string        // "short greeting", "long greeting", "beep", "silence"
	At       time.Duration // audio heard when it was decided (from the answer)
	Greeting time.Duration // the greeting's length (first to last speech frame)
}

// Detector takes a call's audio from the answer on, one frame at a time.
// Not safe for concurrent use.
type Detector struct {
	cfg    Config
	frames int // frames pushed

	floor     float64
	run       int // consecutive speech frames before the greeting starts
	started   int // frame the greeting started (-1: not yet)
	lastVoice int // last speech frame
	greeting  []int16

	tone     int     // consecutive tone frames
	toneHz   float64 // the tone's frequency
	toneGap  int
	beepSeen bool
	beepEnd  int // frame the last beep ended (-1: none, or still sounding)

	decided *Decision
}

// New is a detector with cfg's limits.
func New(cfg Config) *Detector {
	cfg.defaults()
	return &Detector{cfg: cfg, floor: 100, started: -1, beepEnd: -1}
}

// Speech: a frame well above an adaptive noise floor, and above an
// absolute minimum (the voice loop's rule, app/voice/vad.go).
const (
	speechRatio = 3.0
	minSpeech   = 200
	startFrames = 3 // 60 ms of speech start the greeting
	maxGreetPCM = 8 * rate
)

func frames(d time.Duration) int { return int((d + frame - 1) / frame) }

// Push takes the next 20 ms frame; it returns the decision once it is
// made (and the same one after). Push goes on tracking beeps after it.
func (d *Detector) Push(pcm []int16) (Decision, bool) {
	d.frames++
	n := d.frames
	e := rms(pcm)
	hz, tonal := pureTone(pcm, e)
	d.trackBeep(n, hz, tonal)
	speech := !tonal && e >= minSpeech && e > d.floor*speechRatio
	if !speech && !tonal {
		if e < d.floor {
			d.floor = 0.8*d.floor + 0.2*e
		} else {
			d.floor = 0.98*d.floor + 0.02*e
		}
		d.floor = math.Max(d.floor, 20)
	}
	if speech {
		d.run++
		if d.started < 0 && d.run >= startFrames {
			d.started = n - d.run + 1
		}
		if d.started >= 0 {
			d.lastVoice = n
		}
	} else {
		d.run = 0
	}
	if d.started >= 0 && len(d.greeting) < maxGreetPCM && (d.decided == nil) {
		d.greeting = append(d.greeting, pcm...)
	}
	if d.decided != nil {
		return *d.decided, true
	}
	switch {
	case d.beepSeen:
		d.decide(Machine, "beep")
	case d.started >= 0 && d.lastVoice-d.started+1 >= frames(d.cfg.MaxGreeting):
		d.decide(Machine, "long greeting")
	case d.started >= 0 && n-d.lastVoice >= frames(d.cfg.Pause):
		d.decide(Human, "short greeting")
	case d.started < 0 && n >= frames(d.cfg.MaxSilence):
		d.decide(Unknown, "silence")
	}
	if d.decided != nil {
		return *d.decided, true
	}
	return Decision{}, false
}

func (d *Detector) decide(verdict, reason string) {
	g := time.Duration(0)
	if d.started >= 0 {
		g = time.Duration(d.lastVoice-d.started+1) * frame
	}
	d.decided = &Decision{Verdict: verdict, Reason: reason, At: time.Duration(d.frames) * frame, Greeting: g}
}

// Greeting is the greeting's audio up to the decision (for a transcript).
func (d *Detector) Greeting() []int16 { return d.greeting }

// Override changes the verdict (a transcript's words decided it).
func (d *Detector) Override(verdict, reason string) {
	if d.decided != nil {
		d.decided.Verdict, d.decided.Reason = verdict, reason
	}
}

// trackBeep follows runs of a pure tone at one frequency (a frame's gap
// allowed); a run as long as cfg.Beep is a beep, which ends once the tone
// has stopped for 60 ms.
func (d *Detector) trackBeep(n int, hz float64, tonal bool) {
	switch {
	case tonal && (d.tone == 0 || hz == d.toneHz):
		d.tone++
		d.toneHz, d.toneGap = hz, 0
		if d.tone >= frames(d.cfg.Beep) {
			d.beepSeen, d.beepEnd = true, -1
		}
	case d.tone > 0:
		d.toneGap++
		if d.toneGap > 2 {
			if d.tone >= frames(d.cfg.Beep) {
				d.beepEnd = n
			}
			d.tone, d.toneGap = 0, 0
			if tonal {
				d.tone, d.toneHz = 1, hz
			}
		}
	}
}

// BeepEnded reports whether a beep has sounded and stopped: a machine is
// recording from then on.
func (d *Detector) BeepEnded() bool { return d.beepSeen && d.beepEnd >= 0 }

// BeepSeen reports whether a beep has sounded (it may still sound).
func (d *Detector) BeepSeen() bool { return d.beepSeen }

// Silent is how long the line has been quiet (no speech, no tone).
func (d *Detector) Silent() time.Duration {
	last := max(d.lastVoice, d.beepEnd)
	if d.tone > 0 {
		return 0
	}
	if d.started < 0 && last <= 0 {
		return time.Duration(d.frames) * frame
	}
	return time.Duration(d.frames-last) * frame
}

// beepHz are the tones answering machines and voicemail systems beep at.
var beepHz = []float64{425, 440, 480, 850, 900, 950, 1000, 1100, 1200, 1400, 1500, 1800, 2000, 2100}

// pureTone finds a frame whose energy is nearly all at one of beepHz
// (Goertzel): its frequency and true; speech spreads its energy over many
// harmonics and never is.
func pureTone(pcm []int16, e float64) (float64, bool) {
	if e < minSpeech || len(pcm) < frameSamples {
		return 0, false
	}
	total := e * e * float64(len(pcm)) // sum of squares
	best, bestHz := 0.0, 0.0
	for _, hz := range beepHz {
		if p := goertzel(pcm, hz); p > best {
			best, bestHz = p, hz
		}
	}
	// A sinusoid of amplitude A over N samples: power (A N / 2)^2, energy
	// A^2 N / 2; the ratio below is 1 for a pure tone at the bin.
	ratio := best / (total * float64(len(pcm)) / 2)
	return bestHz, ratio > 0.6
}

// goertzel is the power of pcm at hz.
func goertzel(pcm []int16, hz float64) float64 {
	k := 2 * math.Cos(2*math.Pi*hz/rate)
	var s1, s2 float64
	for _, v := range pcm {
		s := float64(v) + k*s1 - s2
		s2, s1 = s1, s
	}
	return s1*s1 + s2*s2 - k*s1*s2
}

func rms(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, s := range pcm {
		sum += float64(s) * float64(s)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// machinePhrases are words of voicemail greetings.
var machinePhrases = []string{"leave a message", "leave your message", "leave me a message", "after the tone", "after the beep",
	"at the tone", "at the beep", "not available", "unavailable", "voicemail", "voice mail", "mailbox",
	"can't take your call", "cannot take your call", "unable to take your call", "can't come to the phone",
	"record your message", "you have reached", "you've reached", "please leave"}

// MachinePhrase reports whether a greeting's transcript has words only
// answering machines say.
func MachinePhrase(text string) bool {
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	t = strings.NewReplacer("’", "'", ",", "", ".", "").Replace(t)
	for _, p := range machinePhrases {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}
