package voice

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/dial"
	"github.com/agentd/agentd/dial/media"
	"github.com/agentd/agentd/internal/testkit/llmtest"
	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/pion/rtp"
)

// The caller's RTP arrives impaired (5% lost, up to 40 ms of jitter, so
// packets also arrive out of order) at a real dial/media session: the
// utterance speech-to-text gets is still the caller's speech (one request,
// its loudness envelope close to what was said), and the agent answers on
// the wire. The same run unimpaired is the reference.
func TestImpairedRTPStillUnderstood(t *testing.T) {
	said := voiceOf(t, "I would like to order a chocolate cake for Saturday.")
	cc, cm := understood(t, said, 0, 0)
	bc, bm := understood(t, said, 0.05, 40*time.Millisecond)
	t.Logf("clean: envelope correlation %.3f, speech frames missing %.1f%%; impaired: %.3f, %.1f%%", cc, 100*cm, bc, 100*bm)
	// Quiet machine: clean 1.000 and 0 %, impaired 0.87 and about 5 %
	// (the lost packets, played as silence; the jitter costs nothing). A
	// loaded machine's scheduling slips the peer too, hence the room; the
	// reordered packets dropped (about a quarter) would miss far more.
	if cc < 0.8 || cm > 0.1 || bc < 0.75 || bm > 0.15 {
		t.Errorf("clean %.3f / %.1f%%, impaired %.3f / %.1f%%: want correlation >= 0.8 / 0.75 and missing <= 10 / 15 %%", cc, 100*cm, bc, 100*bm)
	}
}

// understood plays said to a call over loopback RTP with the given loss
// and jitter and returns the correlation of the 20 ms loudness envelopes
// of said and of what speech-to-text received.
func understood(t *testing.T, said []int16, loss float64, jitter time.Duration) (corr, missing float64) {
	r := newRig(t, nil, nil)
	r.texts("I would like to order a chocolate cake for Saturday.")
	r.model.Push(llmtest.Reply{Content: "Of course, it will be ready on Saturday."})
	r.speech.AnswerSpeech(func(speechtest.SpeakRequest) speechtest.Speech {
		return speechtest.Speech{Tone: 440, Duration: time.Second, Rate: dial.SampleRate}
	})
	r.build(nil)

	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	lo := netip.MustParseAddr("127.0.0.1")
	s, err := media.NewPorts(43000, 43099).Open(lo, media.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(media.Desc{Addr: lo, Port: peer.LocalAddr().(*net.UDPAddr).Port, Proto: "RTP/AVP",
		Formats: []media.Format{{PT: 0, Name: "PCMU", Rate: 8000}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.svc.Talk(ctx, dial.Session{Call: dial.Call{ID: r.call}, Direction: "inbound", Media: s, MaxDuration: time.Minute})

	// The caller: 1 s of silence, the sentence, 3 s of silence, in 20 ms
	// packets, each sent at its time plus up to jitter, some dropped.
	audio := append(append(make([]int16, dial.SampleRate), said...), make([]int16, 3*dial.SampleRate)...)
	type packet struct {
		at  time.Duration
		pkt []byte
	}
	rnd := rand.New(rand.NewPCG(7, 11))
	var plan []packet
	for i := 0; (i+1)*dial.FrameSamples <= len(audio); i++ {
		if rnd.Float64() < loss {
			continue
		}
		h := rtp.Header{Version: 2, PayloadType: 0, SequenceNumber: uint16(i), Timestamp: uint32(i * dial.FrameSamples), SSRC: 99}
		b, _ := h.Marshal()
		for _, v := range audio[i*dial.FrameSamples : (i+1)*dial.FrameSamples] {
			b = append(b, ulaw(v))
		}
		at := time.Duration(i)*dial.FrameDuration + time.Duration(rnd.Float64()*float64(jitter))
		plan = append(plan, packet{at, b})
	}
	slices.SortStableFunc(plan, func(a, b packet) int { return int(a.at - b.at) })
	reordered := 0
	for i := 1; i < len(plan); i++ {
		if plan[i].pkt[3] < plan[i-1].pkt[3] && plan[i-1].pkt[3]-plan[i].pkt[3] < 128 {
			reordered++
		}
	}
	if jitter > 0 && reordered == 0 {
		t.Fatal("the plan reorders nothing")
	}
	to := netip.AddrPortFrom(lo, uint16(s.Port()))
	start := time.Now()
	for _, p := range plan {
		time.Sleep(time.Until(start.Add(p.at))) // the peer's own send schedule
		peer.WriteToUDPAddrPort(p.pkt, to)
	}

	// The agent answers on the wire: its packets carry the tone.
	buf := make([]byte, 1500)
	answered := false
	for deadline := time.Now().Add(10 * time.Second); !answered && time.Now().Before(deadline); {
		peer.SetReadDeadline(deadline)
		n, err := peer.Read(buf)
		if err != nil {
			break
		}
		var pkt rtp.Packet
		if pkt.Unmarshal(buf[:n]) == nil && len(pkt.Payload) > 0 && pkt.Payload[0] != 0xFF && pkt.Payload[0] != 0x7F {
			answered = true
		}
	}
	if !answered {
		t.Fatalf("loss %.2f jitter %s: the agent never answered on the wire", loss, jitter)
	}
	heard := r.speech.Heard()
	if len(heard) != 1 {
		t.Fatalf("loss %.2f jitter %s: speech-to-text got %d requests, want the one utterance", loss, jitter, len(heard))
	}
	h := heard[0]
	got := h.PCM
	if h.Format.Channels == 2 {
		got = got[:0:0]
		for i := 0; i+1 < len(h.PCM); i += 2 {
			got = append(got, h.PCM[i])
		}
	}
	a, b := envelope(said, dial.SampleRate), envelope(got, h.Format.Rate)
	corr, lag := bestCorrelation(a, b)
	return corr, missingSpeech(a, b, lag)
}

// missingSpeech is the share of said's loud frames (the speech) that
// arrived as near silence, with b shifted by lag.
func missingSpeech(a, b []float64, lag int) float64 {
	loud, gone := 0, 0
	for i, v := range a {
		if v < 1000 {
			continue
		}
		loud++
		if j := i + lag; j < 0 || j >= len(b) || b[j] < v/10 {
			gone++
		}
	}
	return float64(gone) / float64(max(loud, 1))
}

// envelope is the RMS of each 20 ms frame.
func envelope(pcm []int16, rate int) []float64 {
	n := rate / 50
	var out []float64
	for i := 0; (i+1)*n <= len(pcm); i++ {
		var sum float64
		for _, v := range pcm[i*n : (i+1)*n] {
			sum += float64(v) * float64(v)
		}
		out = append(out, math.Sqrt(sum/float64(n)))
	}
	return out
}

// bestCorrelation is the highest Pearson correlation of a with b shifted
// by up to a second either way (the utterance's start is the VAD's), and
// that shift.
func bestCorrelation(a, b []float64) (float64, int) {
	best, at := -1.0, 0
	for lag := -50; lag <= 50; lag++ {
		var x, y []float64
		for i := range a {
			if j := i + lag; j >= 0 && j < len(b) {
				x, y = append(x, a[i]), append(y, b[j])
			}
		}
		if len(x) < len(a)/2 {
			continue
		}
		if c := pearson(x, y); c > best {
			best, at = c, lag
		}
	}
	return best, at
}

func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/float64(len(x)), my/float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
