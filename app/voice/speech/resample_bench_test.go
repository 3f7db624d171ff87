package speech

import (
	"math"
	"testing"
)

// BenchmarkResample converts one second of TTS audio to the call's 8 kHz,
// in 100 ms chunks as a body arrives: the cost per second of speech.
func BenchmarkResample(b *testing.B) {
	for _, rate := range []int{24000, 22050} {
		b.Run(map[int]string{24000: "24kHz", 22050: "22050Hz"}[rate], func(b *testing.B) {
			in := make([]float32, rate)
			for i := range in {
				in[i] = float32(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
			}
			out := make([]int16, 0, 8100)
			for b.Loop() {
				r, _ := newResampler(rate, 8000)
				out = out[:0]
				for i := 0; i < rate; i += rate / 10 {
					out = r.push(in[i:min(i+rate/10, rate)], out)
				}
				out = r.flush(out)
			}
		})
	}
}
