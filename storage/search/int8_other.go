//go:build !amd64

package search

// qscan is the portable int8 kernel on other architectures.
func qscan(blocks []int8, bb int, qq *qquery, out []int32) { qscanGo(blocks, bb, qq, out) }
