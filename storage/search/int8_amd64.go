package search

import "golang.org/x/sys/cpu"

// qscanAVX2 is qscanGo in AVX2 (int8_amd64.s).
//
//go:noescape
func qscanAVX2(blocks []int8, bb int, offs, vals, abss []int32, out []int32)

var hasAVX2 = cpu.X86.HasAVX2

// qscan uses the AVX2 kernel when the CPU has it.
func qscan(blocks []int8, bb int, qq *qquery, out []int32) {
	if hasAVX2 {
		qscanAVX2(blocks, bb, qq.offs, qq.vals, qq.abss, out)
		return
	}
	qscanGo(blocks, bb, qq, out)
}
