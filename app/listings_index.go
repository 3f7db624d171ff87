package app

import (
	"context"

	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/storage"
)

// newListingVectors shares the knowledge base's embedder and vector index
// (wireKB runs first); nil, for keyword-only search, without an embedder.
func newListingVectors(s *Server) *ListingVectors {
	if s.kb == nil || s.kb.Embedder() == nil {
		return nil
	}
	idx := s.kb.VectorIndex()
	if idx == nil {
		idx = storage.NewVectorIndex(s.db)
	}
	return &ListingVectors{Embedder: s.kb.Embedder(), Index: idx}
}

// OpenListingVectors builds the listings' vector side for a process
// without a server (agentd import --db), with serve's embedder settings so
// the vectors it writes are the ones the server searches. A running
// server's index picks them up from the vector log.
func OpenListingVectors(ctx context.Context, db *storage.DB, cfg KBConfig) (*ListingVectors, error) {
	emb := cfg.TestEmbedder
	if emb == nil {
		var err error
		if emb, err = kb.NewEmbedder(cfg); err != nil {
			return nil, err
		}
	}
	return &ListingVectors{Embedder: emb, Index: storage.NewVectorIndex(db)}, nil
}
