package voice

import (
	"strings"
	"sync"

	"github.com/agentd/agentd/dial"
)

// output is the agent's side of the media: what was queued, in whole
// frames, so the transport's Sent count maps back to the sentences that
// were actually heard. A barge-in mutes it until the interrupted turn is
// over, so nothing queued after the Clear plays.
type output struct {
	mu      sync.Mutex
	media   dial.Media
	written int64 // samples queued since the call began (== Sent once played)
	muted   bool
	rest    []int16 // a partial frame waiting for more audio
}

// write queues whole frames of pcm; false once muted or when the media
// refuses it (its error).
func (o *output) write(pcm []int16) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.muted {
		return false, nil
	}
	o.rest = append(o.rest, pcm...)
	n := len(o.rest) / dial.FrameSamples * dial.FrameSamples
	if n == 0 {
		return true, nil
	}
	if err := o.media.Write(o.rest[:n]); err != nil {
		return false, err
	}
	o.written += int64(n)
	o.rest = append(o.rest[:0], o.rest[n:]...)
	return true, nil
}

// flush pads the last partial frame with silence and queues it.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.muted || len(o.rest) == 0 {
		o.rest = o.rest[:0]
		return
	}
	f := make([]int16, dial.FrameSamples)
	copy(f, o.rest)
	o.rest = o.rest[:0]
	if o.media.Write(f) != nil {
		return
	}
	o.written += dial.FrameSamples
}

// offset is the queue position the next sample will take.
func (o *output) offset() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.written + int64(len(o.rest))
}

// interrupt drops what is queued and not sent, mutes the output and
// returns how many samples were sent.
func (o *output) interrupt() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.muted = true
	o.media.Clear()
	o.rest = o.rest[:0]
	o.written = o.media.Sent()
	return o.written
}

func (o *output) unmute() {
	o.mu.Lock()
	o.muted = false
	o.mu.Unlock()
}

// playing reports whether queued audio is still being sent.
func (o *output) playing() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.media.Sent() < o.written
}

// span is a sentence's place in the queue.
type span struct {
	text       string
	start, end int64
}

// heard is the text of the spans the caller heard once sent samples had
// left: whole sentences, and the words of a cut one in proportion to its
// audio played; cut reports whether any was cut short.
func heard(spans []span, sent int64) (text string, cut bool) {
	var parts []string
	for _, s := range spans {
		switch {
		case sent >= s.end:
			parts = append(parts, s.text)
		case sent <= s.start:
			cut = true
		default:
			cut = true
			words := strings.Fields(s.text)
			n := int(float64(len(words)) * float64(sent-s.start) / float64(max(1, s.end-s.start)))
			if n > 0 {
				parts = append(parts, strings.Join(words[:n], " "))
			}
		}
	}
	return strings.Join(parts, " "), cut
}
