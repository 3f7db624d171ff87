package search

import "golang.org/x/sys/cpu"

// dotF32FMA is the AVX2+FMA dot product of a with the first len(a) values
// of b; len(a) must be a multiple of 8.
//
//go:noescape
func dotF32FMA(a, b []float32) float32

var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// Dot is the float32 dot product of a and b[:len(a)], with AVX2 FMA when
// the CPU has it. Exact search, the rerank of quantised candidates and
// the speed benchmark's brute-force reference all score with it.
func Dot(a, b []float32) float32 {
	if !hasFMA || len(a) < 8 {
		return dotGo(a, b)
	}
	m := len(a) &^ 7
	s := dotF32FMA(a[:m], b[:len(a)])
	if m < len(a) {
		s += dotGo(a[m:], b[m:len(a)])
	}
	return s
}
