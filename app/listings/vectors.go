package listings

import (
	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/vectorstore"
)

// Vectors is the vector side of listings: the embedder and the shared
// in-memory vector index (a mirror of the vectors table, so writes by
// another process, such as agentd import --db, are seen too). Each
// organization's listings are the space Space(orgID).
type Vectors struct {
	Embedder embed.Embedder
	Index    *search.VectorIndex
	// Tuning is how far search trusts the embedder (embed.TuningOf by
	// default; the server passes the knowledge base's, with its overrides).
	Tuning embed.SearchTuning
}

// NewVectors is the vector side over emb, sharing idx (the server passes
// the knowledge base's index) or, when idx is nil, a new index over db (a
// process without a server: agentd import --db writes the vectors the
// server then picks up from its vector log). Without an embedder it is
// nil: listings get no vectors and search is keyword-only.
func NewVectors(db *vectorstore.Vectors, emb embed.Embedder, idx *search.VectorIndex) *Vectors {
	if emb == nil {
		return nil
	}
	if idx == nil {
		idx = search.NewVectorIndex(db)
	}
	return &Vectors{Embedder: emb, Index: idx, Tuning: embed.TuningOf(emb)}
}

// SpacePrefix starts the vector space of every organization's listings,
// for warming them all at once.
const SpacePrefix = "listings:"

// Space is the vector space of an organization's listings.
func Space(orgID string) string { return SpacePrefix + orgID }

// model identifies the embedder's vectors.
func (v *Vectors) model() vectorstore.VectorModel {
	return vectorstore.VectorModel{Embedder: v.Embedder.Name(), Model: v.Embedder.Model(), Dims: v.Embedder.Dimensions()}
}

// enabled reports whether listings get vectors at all.
func (v *Vectors) enabled() bool { return v != nil && v.Embedder != nil }
