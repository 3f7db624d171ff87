package search

import "golang.org/x/sys/cpu"

// dotsI8AVX2 writes the int32 dot products of q with consecutive rows of
// dims int8 values each (dims a positive multiple of 32) into out.
//
//go:noescape
func dotsI8AVX2(q, rows []int8, dims int, out []int32)

// dotsI8 uses the AVX2 kernel when the CPU has it.
func dotsI8(q, rows []int8, dims int, out []int32) {
	if cpu.X86.HasAVX2 {
		dotsI8AVX2(q, rows[:len(out)*dims], dims, out)
		return
	}
	dotsI8Go(q, rows, dims, out)
}
