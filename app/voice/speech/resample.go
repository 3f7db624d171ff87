package speech

import (
	"fmt"
	"math"
	"sync"
)

// resampler converts a stream of mono samples from one rate to another
// with a windowed-sinc low-pass (Blackman, 16 zero crossings) evaluated
// as a polyphase filter: the band is cut at 85% of the lower Nyquist
// (3.4 kHz for 8 kHz, the telephone band), so what a TTS service renders
// above it does not fold back as aliasing. It keeps the history a filter
// needs between chunks, so chunks come out as they go in.
type resampler struct {
	p, q  int64 // the step is p/q input samples per output sample
	half  int64 // kernel half-width, in input samples
	coef  [][]float32
	hist  []float32 // input from absolute index base
	base  int64
	total int64 // input samples pushed
	n     int64 // next output index
}

const (
	zeroCrossings = 16
	passFraction  = 0.425 // cutoff as a fraction of the lower rate
	maxPhases     = 1024
)

type kernelKey struct{ p, q int64 }

// kernels caches the coefficients per rate pair: every TTS stream of a
// server uses the same.
var kernels sync.Map // kernelKey -> [][]float32

func newResampler(in, out int) (*resampler, error) {
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("sample rate %d Hz", in)
	}
	g := gcd(int64(in), int64(out))
	r := &resampler{p: int64(in) / g, q: int64(out) / g}
	if r.p == r.q {
		return r, nil
	}
	if r.q > maxPhases {
		return nil, fmt.Errorf("sample rate %d Hz cannot be converted to %d Hz", in, out)
	}
	fc := passFraction * float64(min(in, out)) / float64(in) // cycles per input sample
	r.half = int64(math.Ceil(zeroCrossings / (2 * fc)))
	if c, ok := kernels.Load(kernelKey{r.p, r.q}); ok {
		r.coef = c.([][]float32)
	} else {
		r.coef = makeKernel(r.q, r.half, fc)
		kernels.Store(kernelKey{r.p, r.q}, r.coef)
	}
	r.base = -(r.half - 1)
	r.hist = make([]float32, r.half-1, 4*r.half)
	return r, nil
}

// makeKernel samples h(d) = 2fc·sinc(2fc·d)·blackman(d/half) for every
// phase φ/q of the output between input samples.
func makeKernel(q, half int64, fc float64) [][]float32 {
	coef := make([][]float32, q)
	for ph := range coef {
		c := make([]float32, 2*half)
		for j := range c {
			d := float64(ph)/float64(q) + float64(half-1-int64(j))
			c[j] = float32(kernel(d, half, fc))
		}
		coef[ph] = c
	}
	return coef
}

func kernel(d float64, half int64, fc float64) float64 {
	u := d / float64(half)
	if u <= -1 || u >= 1 {
		return 0
	}
	x := 2 * fc * d
	s := 1.0
	if x != 0 {
		s = math.Sin(math.Pi*x) / (math.Pi * x)
	}
	w := 0.42 + 0.5*math.Cos(math.Pi*u) + 0.08*math.Cos(2*math.Pi*u)
	return 2 * fc * s * w
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// push adds input and appends the output it completes to out.
func (r *resampler) push(in []float32, out []int16) []int16 {
	if r.p == r.q {
		for _, v := range in {
			out = append(out, clamp16(v))
		}
		return out
	}
	r.hist = append(r.hist, in...)
	r.total += int64(len(in))
	return r.emit(out, false)
}

// flush ends the input (zeros after it) and appends the rest of the output.
func (r *resampler) flush(out []int16) []int16 {
	if r.p == r.q {
		return out
	}
	r.hist = append(r.hist, make([]float32, r.half)...)
	return r.emit(out, true)
}

func (r *resampler) emit(out []int16, final bool) []int16 {
	avail := r.base + int64(len(r.hist)) // one past the last input held
	for {
		num := r.n * r.p
		i0, ph := num/r.q, num%r.q
		if i0+r.half > avail-1 || (final && num >= r.total*r.q) {
			break
		}
		x := r.hist[i0-r.half+1-r.base:][:2*r.half]
		c := r.coef[ph]
		var acc float32
		for j, v := range x {
			acc += v * c[j]
		}
		out = append(out, clamp16(acc))
		r.n++
	}
	// Drop the input no later output needs.
	keep := (r.n*r.p)/r.q - r.half + 1
	if drop := keep - r.base; drop > int64(len(r.hist))/2 {
		r.hist = append(r.hist[:0], r.hist[drop:]...)
		r.base = keep
	}
	return out
}

func clamp16(v float32) int16 {
	switch {
	case v >= 32767:
		return 32767
	case v <= -32768:
		return -32768
	}
	return int16(math.Round(float64(v)))
}
