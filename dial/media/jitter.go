package media

// jitterBuffer plays the caller's audio out on our clock, a delay (60 ms,
// growing by a frame for each late packet up to 120 ms) behind the first
// packet's timestamp: packets land by RTP timestamp in a
// sample ring, so reordered packets fall into place, a duplicate
// overwrites the same samples, and a packet older than the play-out point
// is dropped as late. Samples nobody delivered play as silence.
//
// The ring is indexed by RTP timestamp (8 kHz: one sample per tick of the
// timestamp), which copes with any packet time the peer chose.
type jitterBuffer struct {
	depth   uint32 // play-out delay in samples; grows by a frame on each late packet
	stall   int    // frames to hold the play-out point (silence) to grow the delay
	ring    [ringSize]int16
	filled  [ringSize]bool
	cursor  uint32 // timestamp of the next sample played out
	started bool

	// counters, for tests and logs
	played, late, dups, lostFrames, resyncs int
}

const (
	ringSize = 4096             // 512 ms at 8 kHz; a power of two
	maxDepth = 6 * FrameSamples // 120 ms: the most the delay grows to
)

func newJitterBuffer(depthSamples int) *jitterBuffer {
	return &jitterBuffer{depth: uint32(depthSamples)}
}

// diff is a-b as a signed distance on the wrapping 32-bit timestamp line.
func diff(a, b uint32) int32 { return int32(a - b) }

// put stores one packet's samples starting at timestamp ts.
func (j *jitterBuffer) put(ts uint32, pcm []int16) {
	if len(pcm) == 0 || len(pcm) > ringSize/2 {
		return
	}
	if !j.started {
		j.start(ts)
	}
	end := ts + uint32(len(pcm))
	// Far from the play-out point (a timestamp jump, a new stream, a peer
	// whose timestamps stood still through silence, or clocks drifting
	// apart): start over from this packet.
	if diff(end, j.cursor) > ringSize-FrameSamples || diff(ts, j.cursor) < -ringSize/2 {
		j.resyncs++
		j.start(ts)
		end = ts + uint32(len(pcm))
	}
	if diff(end, j.cursor) <= 0 {
		// Late: the network's jitter is more than the delay allows, so
		// the delay grows by a frame (up to maxDepth).
		j.late++
		if j.depth < maxDepth {
			j.depth += FrameSamples
			j.stall++
		}
		return
	}
	dup := true
	for i, s := range pcm {
		t := ts + uint32(i)
		if diff(t, j.cursor) < 0 {
			continue // this part is already played
		}
		k := t & (ringSize - 1)
		if !j.filled[k] {
			dup = false
		}
		j.ring[k], j.filled[k] = s, true
	}
	if dup {
		j.dups++
	}
}

func (j *jitterBuffer) start(ts uint32) {
	j.ring = [ringSize]int16{}
	j.filled = [ringSize]bool{}
	j.cursor = ts - j.depth
	j.started = true
}

// frame fills out with the next 20 ms: what arrived, silence elsewhere.
func (j *jitterBuffer) frame(out []int16) {
	if j.stall > 0 {
		j.stall--
		clear(out)
		return
	}
	got := false
	for i := range out {
		k := (j.cursor + uint32(i)) & (ringSize - 1)
		if j.filled[k] {
			out[i], got = j.ring[k], true
			j.filled[k] = false
		} else {
			out[i] = 0
		}
	}
	if j.started {
		j.cursor += uint32(len(out))
		if got {
			j.played++
		} else {
			j.lostFrames++
		}
	}
}
