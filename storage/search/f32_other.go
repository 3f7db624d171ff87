//go:build !amd64

package search

// Dot is the float32 dot product of a and b[:len(a)] (portable code on
// this architecture).
func Dot(a, b []float32) float32 { return dotGo(a, b) }
