package voice

import (
	"math"
	"time"

	"github.com/agentd/agentd/dial"
)

// Voice activity: a frame is speech when its RMS energy stands well above
// an adaptive noise floor (and above an absolute minimum, so digital
// silence does not make breath into speech). The floor follows quiet
// frames only: down fast, up slowly.
const (
	speechRatio     = 3.0 // a speech frame is this many times the floor's RMS (~10 dB)
	minSpeechRMS    = 200 // about -44 dBFS: quieter is never speech
	minFloorRMS     = 20
	initialFloorRMS = 100
	startFrames     = 3  // 60 ms of speech start an utterance
	preRollFrames   = 10 // 200 ms before the start go to STT too
	gapFrames       = 3  // dips up to 60 ms inside speech do not break a run
	maxUtterance    = 30 * dial.SampleRate
)

// Barge-in: interruptionThreshold t (0-1, default 0.5) sets how much caller
// speech stops the agent: a run of speech frames (gaps of up to 60 ms
// allowed) lasting bargeMin + t*(bargeMax-bargeMin), each frame at least
// (2 + 6t) times the noise floor's RMS (6 to 18 dB over it). So 0 is
// 100 ms of anything louder than the line, 0.5 (the default) 550 ms at
// about 14 dB, 1 is a full second of clear speech; a cough (150 ms)
// interrupts only below about 0.06.
const (
	bargeMin             = 100 * time.Millisecond
	bargeMax             = 1000 * time.Millisecond
	DefaultInterruptions = 0.5
)

// bargeRule is the threshold's frames and energy ratio.
type bargeRule struct {
	frames int
	ratio  float64
}

func newBargeRule(t float64) bargeRule {
	t = math.Max(0, math.Min(1, t))
	d := bargeMin + time.Duration(t*float64(bargeMax-bargeMin))
	return bargeRule{frames: int((d + dial.FrameDuration - 1) / dial.FrameDuration), ratio: 2 + 6*t}
}

// vad finds the caller's utterances and their ends (endpointing), and
// counts the run of loud speech barge-in is decided on.
type vad struct {
	floor     float64
	endFrames int // silence that ends a turn
	rule      bargeRule

	pre      [][]int16 // last frames before an utterance
	speaking bool      // inside an utterance
	run      int       // consecutive speech frames (before start)
	silent   int       // frames of silence inside the utterance
	voiced   int       // speech frames in the utterance
	pcm      []int16   // the utterance so far
	barge    int       // loud frames of the current run
	bargeGap int
}

func newVAD(endpointing time.Duration, threshold float64) *vad {
	return &vad{floor: initialFloorRMS, endFrames: max(1, int(endpointing/dial.FrameDuration)), rule: newBargeRule(threshold)}
}

// vadEvent is what one frame changed.
type vadEvent struct {
	started bool    // an utterance began
	ended   []int16 // an utterance ended: its audio (endpointing silence trimmed to 200 ms)
	barged  bool    // the loud run just reached the barge-in threshold
	speech  bool    // the frame is speech
}

func rms(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, s := range pcm {
		f := float64(s)
		sum += f * f
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// push takes the caller's next 20 ms frame.
func (v *vad) push(pcm []int16) vadEvent {
	e := rms(pcm)
	speech := e >= minSpeechRMS && e > v.floor*speechRatio
	if !speech {
		if e < v.floor {
			v.floor = 0.8*v.floor + 0.2*e
		} else {
			v.floor = 0.98*v.floor + 0.02*e
		}
		v.floor = math.Max(v.floor, minFloorRMS)
	}
	ev := vadEvent{speech: speech}

	// The barge-in run: loud frames, short dips allowed.
	switch {
	case e >= minSpeechRMS && e > v.floor*v.rule.ratio:
		v.barge++
		v.bargeGap = 0
		if v.barge == v.rule.frames {
			ev.barged = true
		}
	case v.barge > 0:
		v.bargeGap++
		if v.bargeGap > gapFrames {
			v.barge, v.bargeGap = 0, 0
		}
	}

	frame := append([]int16(nil), pcm...)
	if !v.speaking {
		v.pre = append(v.pre, frame)
		if len(v.pre) > preRollFrames {
			v.pre = v.pre[1:]
		}
		if speech {
			v.run++
		} else {
			v.run = 0
		}
		if v.run >= startFrames {
			v.speaking, v.silent, v.voiced, ev.started = true, 0, v.run, true
			v.pcm = v.pcm[:0]
			for _, f := range v.pre {
				v.pcm = append(v.pcm, f...)
			}
			v.pre = v.pre[:0]
		}
		return ev
	}
	if len(v.pcm) < maxUtterance {
		v.pcm = append(v.pcm, frame...)
	}
	if speech {
		v.silent = 0
		v.voiced++
		return ev
	}
	v.silent++
	if v.silent >= v.endFrames || len(v.pcm) >= maxUtterance {
		keep := len(v.pcm) - max(0, v.silent-preRollFrames)*dial.FrameSamples
		ev.ended = append([]int16(nil), v.pcm[:max(0, keep)]...)
		v.speaking, v.run = false, 0
		v.pcm = v.pcm[:0]
	}
	return ev
}

// reset forgets an utterance in progress (the agent ended it).
func (v *vad) reset() {
	v.speaking, v.run, v.barge, v.bargeGap = false, 0, 0, 0
	v.pcm, v.pre = v.pcm[:0], v.pre[:0]
}
