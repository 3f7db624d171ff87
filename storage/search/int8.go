package search

import (
	"math"
	"sync"
)

// qmatrix is an int8 copy of a space's vectors for the coarse pass: each
// row scaled by its own max |x| to [-127, 127] and zero-padded to a
// multiple of 32 values (the AVX2 kernel's step). Scoring reads a quarter
// of the bytes of the float32 matrix, which is what bounds an exact scan.
type qmatrix struct {
	dims  int // padded
	data  []int8
	scale []float32
}

// rerankDepth is how many coarse candidates are rescored exactly for a top
// k: int8 rounding moves scores by well under 1%, so the true top k sits
// far inside this depth.
func rerankDepth(k int) int { return max(10*k, 100) }

// Quantize builds the int8 copy from the float32 matrix; from then on Put
// and Remove keep it in step. Call it once a space is loaded: searches of
// more than a few hundred vectors then scan the int8 copy first.
func (sp *VectorSpace) Quantize() {
	q := &qmatrix{dims: (sp.dims + 31) / 32 * 32}
	q.data = make([]int8, 0, len(sp.ids)*q.dims)
	q.scale = make([]float32, 0, len(sp.ids))
	for i := range sp.ids {
		q.add(sp.row(i))
	}
	sp.q = q
}

// quantize writes v as int8 into dst (len q.dims) and returns the scale.
func quantize(dst []int8, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	clear(dst)
	if m == 0 {
		return 0
	}
	f := 127 / m
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x * f)))
	}
	return m / 127
}

func (q *qmatrix) add(v []float32) {
	if q == nil {
		return
	}
	n := len(q.scale)
	q.data = append(q.data, make([]int8, q.dims)...)
	q.scale = append(q.scale, quantize(q.data[n*q.dims:], v))
}

func (q *qmatrix) set(i int, v []float32) {
	if q != nil {
		q.scale[i] = quantize(q.data[i*q.dims:(i+1)*q.dims], v)
	}
}

func (q *qmatrix) move(from, to int) {
	if q != nil {
		copy(q.data[to*q.dims:(to+1)*q.dims], q.data[from*q.dims:(from+1)*q.dims])
		q.scale[to] = q.scale[from]
	}
}

func (q *qmatrix) truncate(n int) {
	if q != nil {
		q.data = q.data[:n*q.dims]
		q.scale = q.scale[:n]
	}
}

// qblock is how many rows one kernel call scores.
const qblock = 256

// searchQuantized scores every row on the int8 copy (split across cores),
// keeps the best rerankDepth(k) rows and reranks them on float32.
func (sp *VectorSpace) searchQuantized(query []float32, k int) []VectorHit {
	q := sp.q
	qv := make([]int8, q.dims)
	quantize(qv, query)
	depth := rerankDepth(k)
	parts := splitRows(len(sp.ids))
	tops := make([]topK, len(parts))
	var wg sync.WaitGroup
	for pi, pr := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := newTopK(depth)
			var buf [qblock]int32
			for s := pr[0]; s < pr[1]; s += qblock {
				e := min(pr[1], s+qblock)
				out := buf[:e-s]
				dotsI8(qv, q.data[s*q.dims:e*q.dims], q.dims, out)
				for j, d := range out {
					t.offer(int32(s+j), float32(d)*q.scale[s+j])
				}
			}
			tops[pi] = t
		}()
	}
	wg.Wait()
	exact := newTopK(k)
	for _, t := range tops {
		for _, e := range t.h {
			exact.offer(e.row, dot(query, sp.row(int(e.row))))
		}
	}
	return sp.merge([]topK{exact}, k)
}

// dotsI8Go is the portable int8 kernel.
func dotsI8Go(q, rows []int8, dims int, out []int32) {
	for r := range out {
		row := rows[r*dims : (r+1)*dims]
		row = row[:len(q)]
		var s0, s1, s2, s3 int32
		i := 0
		for ; i+4 <= len(q); i += 4 {
			s0 += int32(q[i]) * int32(row[i])
			s1 += int32(q[i+1]) * int32(row[i+1])
			s2 += int32(q[i+2]) * int32(row[i+2])
			s3 += int32(q[i+3]) * int32(row[i+3])
		}
		for ; i < len(q); i++ {
			s0 += int32(q[i]) * int32(row[i])
		}
		out[r] = s0 + s1 + s2 + s3
	}
}
