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

// ErrUnavailable marks, beside ErrEmbedder, a failure that says nothing
// about the texts: the service was unreachable, timed out or answered 429
// or 5xx through every retry. The worker tries such sources again later on
// its own; other failures (a malformed answer, a 4xx) would fail again.
var ErrUnavailable = errors.New("embedding service unavailable")

// unavailable wraps err (an ErrEmbedder) as ErrUnavailable too, keeping its
// message.
func unavailable(err error) error { return unavailableError{err} }

type unavailableError struct{ err error }

func (e unavailableError) Error() string   { return e.err.Error() }
func (e unavailableError) Unwrap() []error { return []error{e.err, ErrUnavailable} }
