// Package webvoice carries a browser's voice session: a WebSocket (the
// handler in app/api) whose binary messages are 8 kHz 16-bit mono PCM in
// both directions and whose text messages are small JSON controls. A
// Session is the call's dial.Media, paced by the same 20 ms clock as the
// RTP sessions (media.Every): each tick takes one frame of the browser's
// audio (silence when none came) and sends one frame of the agent's.
// No HTTP here: the handler feeds Receive and sends what Outgoing gives.
package webvoice

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"
)

const (
	// maxQueued frames of the browser's audio wait for a tick (400 ms):
	// a browser whose clock runs fast, or a burst after a stall, loses
	// its oldest frames rather than delaying the turn.
	maxQueued   = 20
	inputQueue  = 64 // frames and digits waiting for Read
	outQueue    = 64 // messages waiting for the socket's writer
	recordQueue = 50
)

// ErrClosed is returned by Write once the session ended.
var ErrClosed = errors.New("webvoice: session ended")

// Message is one WebSocket message to the browser: Binary audio or a JSON
// text control.
type Message struct {
	Binary bool
	Data   []byte
}

// Session is one browser voice session's dial.Media.
type Session struct {
	in   chan dial.Input
	out  chan Message
	done chan struct{}
	hung chan struct{} // the browser asked to hang up
	sent atomic.Int64
	stop func()

	mu       sync.Mutex
	closed   bool
	muted    bool
	caller   [][]int16 // the browser's frames waiting for a tick
	partial  []int16   // samples short of a frame
	agent    []int16   // agent audio queued
	rec      chan [2][]int16
	recDone  chan struct{}
	hangOnce sync.Once
	drops    int
}

// New starts a session on the shared clock.
func New() *Session {
	s := &Session{in: make(chan dial.Input, inputQueue), out: make(chan Message, outQueue),
		done: make(chan struct{}), hung: make(chan struct{})}
	s.stop = media.Every(s.tick)
	return s
}

// Outgoing is what to send to the browser, in order; closed by Close.
func (s *Session) Outgoing() <-chan Message { return s.out }

// HungUp is closed when the browser hangs up.
func (s *Session) HungUp() <-chan struct{} { return s.hung }

// Receive takes one message from the browser. A malformed one is an
// error for the handler to close the socket with; nothing is delivered.
func (s *Session) Receive(binaryMsg bool, data []byte) error {
	in, err := Parse(binaryMsg, data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	switch {
	case in.PCM != nil:
		pcm := in.PCM
		if s.muted {
			clear(pcm)
		}
		s.partial = append(s.partial, pcm...)
		for len(s.partial) >= dial.FrameSamples {
			f := make([]int16, dial.FrameSamples)
			copy(f, s.partial)
			s.partial = s.partial[:copy(s.partial, s.partial[dial.FrameSamples:])]
			if len(s.caller) >= maxQueued {
				s.caller = s.caller[1:]
				s.drops++
			}
			s.caller = append(s.caller, f)
		}
	case in.Mute != nil:
		s.muted = *in.Mute
	case in.Hangup:
		s.hangOnce.Do(func() { close(s.hung) })
	case in.Digits != "":
		for i := 0; i < len(in.Digits); i++ {
			s.deliver(dial.Input{Digit: in.Digits[i]})
		}
	}
	return nil
}

// Send queues a control message for the browser (dropped when the
// browser does not keep up: the socket is then closed by its writer).
func (s *Session) Send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push(Message{Data: b})
}

// push sends under mu, never after Close and never blocking.
func (s *Session) push(m Message) bool {
	if s.closed {
		return false
	}
	select {
	case s.out <- m:
		return true
	default:
		return false
	}
}

// tick is one 20 ms step: one frame of the caller's audio to Read, one of
// the agent's to the browser.
func (s *Session) tick() {
	var caller, agent []int16
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if len(s.caller) > 0 {
		caller = s.caller[0]
		s.caller = s.caller[1:]
	} else {
		caller = make([]int16, dial.FrameSamples)
	}
	if n := len(s.agent); n > 0 {
		take := min(n, dial.FrameSamples)
		agent = make([]int16, dial.FrameSamples)
		copy(agent, s.agent[:take])
		s.agent = s.agent[:copy(s.agent, s.agent[take:])]
		b := make([]byte, 2*dial.FrameSamples)
		for i, v := range agent {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		if s.push(Message{Binary: true, Data: b}) {
			s.sent.Add(int64(take))
		}
	}
	if s.rec != nil {
		select {
		case s.rec <- [2][]int16{caller, agent}:
		default:
		}
	}
	s.mu.Unlock()
	s.deliver(dial.Input{PCM: caller})
}

// deliver hands one input to Read without blocking: when nobody reads,
// the oldest is dropped.
func (s *Session) deliver(in dial.Input) {
	for range 2 {
		select {
		case s.in <- in:
			return
		default:
		}
		select {
		case <-s.in:
		default:
		}
	}
}

// Read returns the caller's next frame or digit (dial.Media).
func (s *Session) Read(ctx context.Context) (dial.Input, error) {
	select {
	case <-s.done:
		return dial.Input{}, io.EOF
	default:
	}
	select {
	case in := <-s.in:
		return in, nil
	case <-s.done:
		return dial.Input{}, io.EOF
	case <-ctx.Done():
		return dial.Input{}, ctx.Err()
	}
}

// Write queues agent audio; the clock sends it a frame a tick.
func (s *Session) Write(pcm []int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.agent = append(s.agent, pcm...)
	return nil
}

// Clear drops the agent audio not yet sent and tells the browser to drop
// what it has buffered but not played (barge-in).
func (s *Session) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agent = s.agent[:0]
	b, _ := json.Marshal(map[string]string{"type": "clear"})
	s.push(Message{Data: b})
}

// Sent is how many agent samples have been sent to the browser.
func (s *Session) Sent() int64 { return s.sent.Load() }

// SendDigits has no far end to press keys on in a browser: the digits
// are ignored.
func (s *Session) SendDigits(context.Context, string) error { return nil }

// Record tees both directions into rec on its own goroutine; nil stops.
func (s *Session) Record(rec dial.Recorder) {
	s.mu.Lock()
	old, oldDone := s.rec, s.recDone
	s.rec, s.recDone = nil, nil
	if rec != nil && !s.closed {
		ch, done := make(chan [2][]int16, recordQueue), make(chan struct{})
		s.rec, s.recDone = ch, done
		go func() {
			defer close(done)
			for f := range ch {
				rec.RecordFrame(f[0], f[1])
			}
		}()
	}
	s.mu.Unlock()
	if old != nil {
		close(old)
		<-oldDone
	}
}

// Close ends the session: Read returns io.EOF and Outgoing is closed once
// what is queued in it has been taken. Safe to call more than once.
func (s *Session) Close() {
	s.stop()
	s.Record(nil)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.out)
	close(s.done)
	s.mu.Unlock()
}

// Dropped is how many of the browser's frames were dropped because too
// many were waiting (a fast clock, a burst).
func (s *Session) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drops
}

var _ dial.Media = (*Session)(nil)

// Queued is how many agent samples wait to be sent.
func (s *Session) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.agent)
}
