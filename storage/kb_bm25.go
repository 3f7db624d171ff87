package storage

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"
)

// FTS5's bm25() uses idf = ln((N-n+0.5)/(n+0.5)), which gives terms in half
// the rows or more no weight at all and underweights every frequent term
// of a narrow-domain collection ("flow", "pressure" in aeronautics). The
// usual BM25 (Lucene, Robertson/Sparck Jones with +1) uses
// ln(1+(N-n+0.5)/(n+0.5)). bm25Rerank rescores FTS5's best candidates with
// that idf: FTS5 still finds the candidates and computes each term's
// saturated, length-normalised frequency (k1 1.2, b 0.75); only the idf
// changes.

// bm25Candidates is how many FTS5 candidates are rescored.
func bm25Candidates(k int) int { return max(4*k, 200) }

// bm25Rerank rescores candidate chunk ids (FTS5 order) for the query terms.
func bm25Rerank(ctx context.Context, tx *sql.Tx, terms []string, cands []int64, k int) ([]ScoredID, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	var n float64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM kb_chunks").Scan(&n); err != nil {
		return nil, err
	}
	mult := map[string]int{}
	var distinct []string
	for _, t := range terms {
		if mult[t] == 0 {
			distinct = append(distinct, t)
		}
		mult[t]++
	}
	in := strings.Repeat("?,", len(cands)-1) + "?"
	args := make([]any, 0, len(cands)+1)
	args = append(args, "")
	for _, id := range cands {
		args = append(args, id)
	}
	score := make(map[int64]float64, len(cands))
	for _, t := range distinct {
		phrase := `"` + t + `"`
		var df float64
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ?", phrase).Scan(&df); err != nil {
			return nil, fmt.Errorf("storage: term frequency: %w", err)
		}
		if df == 0 {
			continue
		}
		idfFTS := max(1e-6, math.Log((n-df+0.5)/(df+0.5)))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		args[0] = phrase
		rows, err := tx.QueryContext(ctx, "SELECT rowid, bm25(kb_chunks_fts) FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ? AND rowid IN ("+in+")", args...)
		if err != nil {
			return nil, fmt.Errorf("storage: term scores: %w", err)
		}
		for rows.Next() {
			var id int64
			var s float64
			if err := rows.Scan(&id, &s); err != nil {
				rows.Close()
				return nil, err
			}
			score[id] += float64(mult[t]) * idf * (-s / idfFTS)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	order := make(map[int64]int, len(cands))
	for i, id := range cands {
		order[id] = i
	}
	out := make([]ScoredID, 0, len(cands))
	for _, id := range cands {
		out = append(out, ScoredID{ID: id, Score: score[id]})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		return order[out[a].ID] < order[out[b].ID]
	})
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}
