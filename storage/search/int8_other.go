//go:build !amd64

package search

// dotsI8 is the portable int8 kernel on other architectures.
func dotsI8(q, rows []int8, dims int, out []int32) { dotsI8Go(q, rows, dims, out) }
