package search

import (
	"encoding/binary"
	"math"
	"sync"
)

// qmatrix is an int8 copy of a space's vectors for the coarse pass: each
// row scaled by its own max |x| to [-127, 127]. Rows sit in blocks of
// qRows; inside a block, dimensions go in groups of qGroup, and group g of
// the block holds those 4 values of each of its 32 rows side by side
// (qGroupBytes bytes). A scan thus keeps 32 rows' sums in registers while it
// walks the groups (no per-row reduction), and it walks only the groups
// where the query is not zero: a few-word query of the built-in embedder
// (a few non-zero dimensions) reads a few percent of the matrix, a dense
// query of a real model all of it, a quarter of the bytes of float32.
type qmatrix struct {
	groups int       // dimension groups (dims rounded up to qGroup)
	n      int       // rows
	data   []int8    // ceil(n/qRows) blocks of groups*qGroupBytes
	scale  []float32 // per row: int8 value times scale is the float
	tmp    []int8    // one quantised row (writes hold the space's lock)
}

const (
	qRows       = 32             // rows per block
	qGroup      = 4              // dimensions per group
	qGroupBytes = qRows * qGroup // one group of one block
	qScanBlocks = 8              // blocks scored per kernel call
	qScanRows   = qScanBlocks * qRows
)

// rerankDepth is how many coarse candidates are rescored exactly for a top
// k: int8 rounding moves scores by well under 1%, so the true top k sits
// far inside this depth.
func rerankDepth(k int) int { return max(10*k, 100) }

// Quantize builds the int8 copy from the float32 matrix; from then on Put
// and Remove keep it in step. Call it once a space is loaded: searches of
// more than a few hundred vectors then scan the int8 copy first.
func (sp *VectorSpace) Quantize() {
	q := &qmatrix{groups: (sp.dims + qGroup - 1) / qGroup}
	q.tmp = make([]int8, q.groups*qGroup)
	q.data = make([]int8, 0, (len(sp.ids)+qRows-1)/qRows*q.blockBytes())
	q.scale = make([]float32, 0, len(sp.ids))
	for i := range sp.ids {
		q.add(sp.row(i))
	}
	sp.q = q
}

func (q *qmatrix) blockBytes() int { return q.groups * qGroupBytes }

// quantize writes v as int8 into dst (zero-padded to len(dst)) and returns
// the scale.
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

// base is where row i's first group starts in data.
func (q *qmatrix) base(i int) int { return i/qRows*q.blockBytes() + i%qRows*qGroup }

func (q *qmatrix) add(v []float32) {
	if q == nil {
		return
	}
	if q.n%qRows == 0 {
		q.data = append(q.data, make([]int8, q.blockBytes())...)
	}
	q.scale = append(q.scale, 0)
	q.n++
	q.set(q.n-1, v)
}

func (q *qmatrix) set(i int, v []float32) {
	if q == nil {
		return
	}
	q.scale[i] = quantize(q.tmp, v)
	b := q.base(i)
	for g := range q.groups {
		copy(q.data[b+g*qGroupBytes:b+g*qGroupBytes+qGroup], q.tmp[g*qGroup:])
	}
}

func (q *qmatrix) move(from, to int) {
	if q == nil {
		return
	}
	f, t := q.base(from), q.base(to)
	for g := range q.groups {
		o := g * qGroupBytes
		copy(q.data[t+o:t+o+qGroup], q.data[f+o:f+o+qGroup])
	}
	q.scale[to] = q.scale[from]
}

func (q *qmatrix) truncate(n int) {
	if q == nil {
		return
	}
	q.n = n
	q.data = q.data[:(n+qRows-1)/qRows*q.blockBytes()]
	q.scale = q.scale[:n]
}

// qquery is a query prepared for the int8 scan: for each group where it is
// not zero, the group's offset in a block and its 4 int8 values (and their
// absolute values, for the AVX2 kernel) packed in an int32. It also keeps
// the float query's non-zero dimensions when they are few, so the exact
// rerank reads only those.
type qquery struct {
	q8         []int8
	offs       []int32
	vals, abss []int32
	nzIdx      []int32
	nzVal      []float32
}

var qqueryPool = sync.Pool{New: func() any { return new(qquery) }}

// prepare fills qq for query on q (reusing its buffers).
func (qq *qquery) prepare(q *qmatrix, query []float32) {
	qq.q8 = grow(qq.q8, q.groups*qGroup)
	quantize(qq.q8, query)
	qq.offs, qq.vals, qq.abss = qq.offs[:0], qq.vals[:0], qq.abss[:0]
	var a [qGroup]byte
	for g := range q.groups {
		v := qq.q8[g*qGroup : (g+1)*qGroup]
		if v[0]|v[1]|v[2]|v[3] == 0 {
			continue
		}
		qq.offs = append(qq.offs, int32(g*qGroupBytes))
		qq.vals = append(qq.vals, int32(uint32(uint8(v[0]))|uint32(uint8(v[1]))<<8|uint32(uint8(v[2]))<<16|uint32(uint8(v[3]))<<24))
		for j, x := range v {
			a[j] = byte(max(x, -x))
		}
		qq.abss = append(qq.abss, int32(binary.LittleEndian.Uint32(a[:])))
	}
	qq.nzIdx, qq.nzVal = qq.nzIdx[:0], qq.nzVal[:0]
	for i, x := range query {
		if x != 0 {
			if len(qq.nzIdx) >= len(query)/16 {
				qq.nzIdx = qq.nzIdx[:0] // dense: the rerank uses Dot
				break
			}
			qq.nzIdx = append(qq.nzIdx, int32(i))
			qq.nzVal = append(qq.nzVal, x)
		}
	}
}

// dot is the exact score of row against the prepared query's float form.
func (qq *qquery) dot(query, row []float32) float32 {
	if len(qq.nzIdx) == 0 {
		return Dot(query, row)
	}
	var s float32
	for i, d := range qq.nzIdx {
		s += qq.nzVal[i] * row[d]
	}
	return s
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// searchQuantized scores every row on the int8 copy (blocks split across
// cores), keeps the best rerankDepth(k) rows and reranks them on float32.
func (sp *VectorSpace) searchQuantized(query []float32, k int) []VectorHit {
	q := sp.q
	qq := qqueryPool.Get().(*qquery)
	defer qqueryPool.Put(qq)
	qq.prepare(q, query)
	depth := rerankDepth(k)
	parts := splitRows((q.n+qRows-1)/qRows, minParallelRows/qRows)
	tops := make([]topK, len(parts))
	scan := func(pi int) {
		pr := parts[pi]
		t := newTopK(depth)
		var buf [qScanRows]int32
		bb := q.blockBytes()
		for b := pr[0]; b < pr[1]; b += qScanBlocks {
			e := min(pr[1], b+qScanBlocks)
			out := buf[:(e-b)*qRows]
			qscan(q.data[b*bb:e*bb], bb, qq, out)
			first := b * qRows
			rows := min(len(out), q.n-first)
			for j, d := range out[:rows] {
				s := float32(d) * q.scale[first+j]
				if len(t.h) < t.k || s > t.h[0].score {
					t.offer(int32(first+j), s)
				}
			}
		}
		tops[pi] = t
	}
	if len(parts) == 1 {
		scan(0)
	} else {
		var wg sync.WaitGroup
		for pi := range parts {
			wg.Go(func() { scan(pi) })
		}
		wg.Wait()
	}
	exact := newTopK(k)
	for _, t := range tops {
		for _, e := range t.h {
			exact.offer(e.row, qq.dot(query, sp.row(int(e.row))))
		}
	}
	return sp.merge([]topK{exact}, k)
}

// qscanGo is the portable kernel: out[b*qRows+r] is the int32 dot product
// of the query's non-zero groups with row r of block b.
func qscanGo(blocks []int8, bb int, qq *qquery, out []int32) {
	for b := 0; b < len(out)/qRows; b++ {
		blk := blocks[b*bb : (b+1)*bb]
		acc := out[b*qRows : (b+1)*qRows]
		clear(acc)
		for gi, off := range qq.offs {
			v := qq.vals[gi]
			q0, q1, q2, q3 := int32(int8(v)), int32(int8(v>>8)), int32(int8(v>>16)), int32(int8(v>>24))
			grp := blk[off : off+qGroupBytes]
			for r := range qRows {
				x := grp[r*qGroup : r*qGroup+qGroup]
				acc[r] += q0*int32(x[0]) + q1*int32(x[1]) + q2*int32(x[2]) + q3*int32(x[3])
			}
		}
	}
}
