package kb

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand"
	"strings"

	"github.com/agentd/agentd/embed"
)

// syntheticEmbedder stands in for an external embedding model, which
// cannot run here (no model weights can be installed): it is NOT a model
// and knows nothing of language. It emulates one whose meaning goes beyond
// shared words: a vector is the built-in (lexical) vector, weighted
// sqrt(lex), joined to a topic part, weighted sqrt(1-lex). A document's
// topic part is a random unit vector of its own; a judged query's is the
// gain-weighted sum of its relevant documents' topic vectors, blurred by
// noise (0: a perfect oracle, 1: pure noise); any other text's is random.
// Cosine is then lex x lexical cosine + (1-lex) x topic cosine, so it
// agrees with keyword search where real models do (shared words) and adds
// judged relevance at a strength set by noise. It tests the fusion
// mechanism and the "trust the semantic half more" rule for external
// models; it cannot tell how good a real model is.
type syntheticEmbedder struct {
	*embed.Builtin
	lex, noise float64
	topicDims  int
	shingles   map[string]string         // 6-word shingle -> document id
	queries    map[string]map[string]int // query text -> document -> gain
	name       string
}

const synthTopicDims = 256

func newSyntheticEmbedder(b *embed.Builtin, c *beir, lex, noise float64) *syntheticEmbedder {
	e := &syntheticEmbedder{Builtin: b, lex: lex, noise: noise, topicDims: synthTopicDims,
		shingles: map[string]string{}, queries: map[string]map[string]int{}}
	for _, d := range c.docs {
		w := strings.Fields(strings.ToLower(d.Title + " " + d.Text))
		for i := 0; i+6 <= len(w); i++ {
			k := strings.Join(w[i:i+6], " ")
			if _, ok := e.shingles[k]; !ok {
				e.shingles[k] = d.ID
			}
		}
	}
	for _, q := range c.queries {
		e.queries[q.Text] = c.qrels[q.ID]
	}
	return e
}

// Name makes it an external embedder to the defaults (not "builtin").
func (e *syntheticEmbedder) Name() string { return "synthetic" }

// Model names the strength, so vectors of two strengths never mix.
func (e *syntheticEmbedder) Model() string { return "oracle" }

// Dimensions is the built-in part plus the topic part.
func (e *syntheticEmbedder) Dimensions() int { return e.Builtin.Dimensions() + e.topicDims }

// Embed returns one unit vector per text.
func (e *syntheticEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	lexVecs, err := e.Builtin.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, e.Dimensions())
		lv := lexVecs[i]
		sl := float32(math.Sqrt(e.lex))
		for j, x := range lv {
			v[j] = sl * x
		}
		tv := e.topic(t)
		st := float32(math.Sqrt(1 - e.lex))
		for j, x := range tv {
			v[len(lv)+j] = st * float32(x)
		}
		normalizeVec(v)
		out[i] = v
	}
	return out, nil
}

// topic is the unit topic vector of a text.
func (e *syntheticEmbedder) topic(text string) []float64 {
	if judged, ok := e.queries[text]; ok {
		t := make([]float64, e.topicDims)
		for d, g := range judged {
			for j, x := range randUnit("doc:"+d, e.topicDims) {
				t[j] += float64(g) * x
			}
		}
		normalize64(t)
		n := randUnit("noise:"+text, e.topicDims)
		a, b := math.Sqrt(1-e.noise*e.noise), e.noise
		for j := range t {
			t[j] = a*t[j] + b*n[j]
		}
		normalize64(t)
		return t
	}
	w := strings.Fields(strings.ToLower(text))
	if len(w) >= 6 {
		// A chunk: the document of its middle shingle, else of any.
		for _, i := range []int{(len(w) - 6) / 2, 0, len(w) - 6} {
			if d, ok := e.shingles[strings.Join(w[i:i+6], " ")]; ok {
				return randUnit("doc:"+d, e.topicDims)
			}
		}
	}
	return randUnit("text:"+text, e.topicDims)
}

// randUnit is a random unit vector seeded by s.
func randUnit(s string, dims int) []float64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	r := rand.New(rand.NewSource(int64(h.Sum64())))
	v := make([]float64, dims)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	normalize64(v)
	return v
}

func normalize64(v []float64) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] *= inv
	}
}

func normalizeVec(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// SearchTuning is an external model's (the embedded Builtin's would
// otherwise be promoted).
func (e *syntheticEmbedder) SearchTuning() embed.SearchTuning { return embed.ExternalTuning }
