// Package embed turns Markdown knowledge into chunks and chunks into vectors.
// It holds the pure chunker, the Embedder implementations and the background
// worker that processes knowledge sources; it never imports app.
package embed

import (
	"context"
	"errors"
)

// Embedder turns texts into vectors. Implementations return one L2-normalised
// vector per input text, in input order, each of Dimensions() length.
type Embedder interface {
	// Name is the implementation ("builtin", "openai"); with Model and
	// Dimensions it identifies the vector space stored with the index, so a
	// change of any of them forces a reindex.
	Name() string
	Model() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrEmbedder marks a failure of the embedding service (after retries); the
// worker records it on the source as its error.
var ErrEmbedder = errors.New("embedder failed")
