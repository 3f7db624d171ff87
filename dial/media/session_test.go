package media

import (
	"context"
	"math"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/internal/testkit"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// pair opens two sessions on loopback that talk to each other.
func pair(t *testing.T, offerA, offerB []Format) (a, b *Session) {
	t.Helper()
	ports := NewPorts(30000, 30999)
	var err error
	if a, err = ports.Open(loopback, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, err = ports.Open(loopback, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	if err := a.Start(Desc{Addr: loopback, Port: b.Port(), Proto: "RTP/AVP", Formats: offerB}); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(Desc{Addr: loopback, Port: a.Port(), Proto: "RTP/AVP", Formats: offerA}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

var allFormats = []Format{{PT: 0, Name: "PCMU", Rate: 8000}, {PT: 8, Name: "PCMA", Rate: 8000}, {PT: 101, Name: "TELEPHONE-EVENT", Rate: 8000}}

// tone is n samples of a sine at hz.
func tone(hz float64, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(8000 * math.Sin(2*math.Pi*hz*float64(i)/SampleRate))
	}
	return out
}

const SampleRate = dial.SampleRate

func rms(pcm []int16) float64 {
	var sum float64
	for _, s := range pcm {
		sum += float64(s) * float64(s)
	}
	return math.Sqrt(sum / float64(max(len(pcm), 1)))
}

// readFor collects what r hears for d: audio and digits.
func readFor(t *testing.T, r *Session, d time.Duration) (pcm []int16, digits string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		in, err := r.Read(ctx)
		if err != nil {
			return pcm, digits
		}
		if in.Digit != 0 {
			digits += string(in.Digit)
		}
		pcm = append(pcm, in.PCM...)
	}
}

func TestSessionAudioAndDigits(t *testing.T) {
	a, b := pair(t, allFormats, allFormats)
	if err := a.Write(tone(440, 8000)); err != nil {
		t.Fatal(err)
	}
	pcm, _ := readFor(t, b, 1500*time.Millisecond)
	if got := rms(pcm); got < 1000 {
		t.Fatalf("b heard rms %.0f, want the tone", got)
	}
	if a.Sent() != 8000 {
		t.Fatalf("Sent = %d, want 8000", a.Sent())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		if err := a.SendDigits(ctx, "19#*"); err != nil {
			t.Error(err)
		}
	}()
	_, digits := readFor(t, b, 2*time.Second)
	if digits != "19#*" {
		t.Fatalf("digits %q, want 19#*", digits)
	}
	st := b.Stats()
	if st.PacketsReceived < 50 || st.Malformed != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSessionClose(t *testing.T) {
	ports := NewPorts(31000, 31003)
	a, err := ports.Open(loopback, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ports.Open(loopback, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ports.Open(loopback, Options{}); err != ErrNoPorts {
		t.Fatalf("third open: %v, want ErrNoPorts", err)
	}
	if err := a.Start(Desc{Addr: loopback, Port: b.Port(), Proto: "RTP/AVP", Formats: allFormats}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close()
	if _, err := a.Read(context.Background()); err == nil {
		t.Fatal("Read after Close did not fail")
	}
	if ports.InUse() != 0 {
		t.Fatalf("%d pairs still in use", ports.InUse())
	}
}

type tapRecorder struct {
	mu             sync.Mutex
	ticks, agentOn int
	callerLoud     int
}

func (r *tapRecorder) RecordFrame(caller, agent []int16) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks++
	if len(caller) != FrameSamples || (agent != nil && len(agent) != FrameSamples) {
		panic("frame size")
	}
	if agent != nil {
		r.agentOn++
	}
	if rms(caller) > 1000 {
		r.callerLoud++
	}
}

// Record sees one caller frame per tick and the agent frame sent in the
// same tick; Clear drops queued agent audio at once and Sent counts only
// what left.
func TestSessionRecordAndClear(t *testing.T) {
	a, b := pair(t, allFormats, allFormats)
	ra, rb := &tapRecorder{}, &tapRecorder{}
	a.Record(ra)
	b.Record(rb)
	a.Write(tone(440, 4*SampleRate)) // 4 s queued
	testkit.Eventually(t, 5*time.Second, func() bool { return a.Sent() >= SampleRate/2 }, "half a second of audio sent")
	a.Clear()
	sent := a.Sent()
	testkit.Never(t, 500*time.Millisecond, func() bool { return a.Sent() != sent }, "audio sent after Clear (%d at Clear)", sent)
	if sent < 300*SampleRate/1000 || sent > 700*SampleRate/1000 {
		t.Fatalf("Sent %d at Clear: want ~0.5 s", sent)
	}
	a.Record(nil)
	b.Record(nil)
	ra.mu.Lock()
	rb.mu.Lock()
	defer ra.mu.Unlock()
	defer rb.mu.Unlock()
	if ra.ticks < 40 || ra.ticks > 60 || int64(ra.agentOn*FrameSamples) != sent {
		t.Errorf("a's recorder: %d ticks, %d with agent audio (sent %d samples)", ra.ticks, ra.agentOn, sent)
	}
	if rb.callerLoud < 15 || rb.agentOn != 0 {
		t.Errorf("b's recorder: %d loud caller frames, %d agent frames", rb.callerLoud, rb.agentOn)
	}
}

// A re-INVITE that puts the call on hold (sendonly) stops our packets; one
// that takes it off hold starts them again.
func TestSessionHold(t *testing.T) {
	a, b := pair(t, allFormats, allFormats)
	count := func() int { return a.Stats().PacketsSent }
	testkit.Eventually(t, 2*time.Second, func() bool { return count() >= 3 }, "packets flowing before the hold")
	a.Update(Desc{Addr: loopback, Port: b.Port(), Proto: "RTP/AVP", Formats: allFormats, Direction: "sendonly"})
	held := count()
	testkit.Never(t, 200*time.Millisecond, func() bool { return count() > held+1 }, "packets sent on hold")
	a.Update(Desc{Addr: loopback, Port: b.Port(), Proto: "RTP/AVP", Formats: allFormats, Direction: "sendrecv"})
	testkit.Eventually(t, 2*time.Second, func() bool { return count() >= held+5 }, "packets sent after the hold ended")
}
