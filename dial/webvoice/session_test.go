package webvoice

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
)

func pcmBytes(n int, v int16) []byte {
	b := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b
}

type recorder struct {
	mu     sync.Mutex
	frames int
}

func (r *recorder) RecordFrame(caller, agent []int16) {
	r.mu.Lock()
	r.frames++
	r.mu.Unlock()
}

// The browser's audio is cut into 20 ms frames whatever its chunks (a
// 30 ms chunk and a 10 ms one make two frames), muted audio arrives as
// silence, digits reach Read, the agent's audio leaves a frame a tick and
// counts in Sent, Clear drops the rest and tells the browser, and Close
// ends Read with io.EOF and closes Outgoing.
func TestSession(t *testing.T) {
	s := New()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec := &recorder{}
	s.Record(rec)
	if err := s.Receive(true, pcmBytes(240, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := s.Receive(true, pcmBytes(80, 1000)); err != nil {
		t.Fatal(err)
	}
	loud := 0
	for loud < 2 {
		in, err := s.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.PCM) != dial.FrameSamples {
			t.Fatalf("frame of %d samples", len(in.PCM))
		}
		if in.PCM[0] == 1000 {
			loud++
		}
	}
	s.Receive(false, []byte(`{"type":"mute","muted":true}`))
	s.Receive(true, pcmBytes(160, 1000))
	s.Receive(false, []byte(`{"type":"dtmf","digits":"7#"}`))
	var digits []byte
	for len(digits) < 2 {
		in, err := s.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if in.Digit != 0 {
			digits = append(digits, in.Digit)
		} else if in.PCM[0] != 0 {
			t.Fatal("muted audio arrived loud")
		}
	}
	if string(digits) != "7#" {
		t.Fatalf("digits %q", digits)
	}

	if err := s.Write(make([]int16, 10*dial.FrameSamples)); err != nil {
		t.Fatal(err)
	}
	var audio int
	for audio < 2 {
		select {
		case m := <-s.Outgoing():
			if m.Binary {
				if len(m.Data) != 2*dial.FrameSamples {
					t.Fatalf("agent frame of %d bytes", len(m.Data))
				}
				audio++
			}
		case <-ctx.Done():
			t.Fatal("no agent audio")
		}
	}
	s.Clear()
	if q := s.Queued(); q != 0 {
		t.Fatalf("%d samples queued after Clear", q)
	}
	cleared := false
	for !cleared {
		select {
		case m := <-s.Outgoing():
			var c struct{ Type string }
			if !m.Binary && json.Unmarshal(m.Data, &c) == nil && c.Type == "clear" {
				cleared = true
			}
		case <-ctx.Done():
			t.Fatal("no clear message")
		}
	}
	if n := s.Sent(); n < 2*dial.FrameSamples || n > 10*dial.FrameSamples {
		t.Fatalf("sent %d samples", n)
	}
	if err := s.Receive(true, []byte{1}); err == nil {
		t.Fatal("an odd byte count accepted")
	}
	s.Receive(false, []byte(`{"type":"hangup"}`))
	select {
	case <-s.HungUp():
	case <-ctx.Done():
		t.Fatal("hangup not seen")
	}
	s.Close()
	s.Close()
	if _, err := s.Read(ctx); err != io.EOF {
		t.Fatalf("Read after Close: %v", err)
	}
	for range s.Outgoing() {
	}
	if err := s.Write(make([]int16, 10)); err != ErrClosed {
		t.Fatalf("Write after Close: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.frames == 0 {
		t.Fatal("nothing recorded")
	}
}
