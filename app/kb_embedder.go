package app

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/embed"
)

// newEmbedder builds the embedder KBConfig selects.
func newEmbedder(cfg KBConfig) (embed.Embedder, error) {
	if cfg.TestEmbedder != nil {
		return cfg.TestEmbedder, nil
	}
	switch strings.ToLower(cfg.Embedder) {
	case "", "builtin":
		dims := cfg.EmbedDims
		if dims == 0 {
			dims = embed.DefaultBuiltinDims
		}
		b, err := embed.NewBuiltin(dims)
		if err != nil {
			return nil, fmt.Errorf("--embed-dims: %w", err)
		}
		return b, nil
	case "openai":
		return newOpenAIEmbedder(cfg)
	}
	return nil, fmt.Errorf("--embedder %q: use builtin or openai", cfg.Embedder)
}

// newOpenAIEmbedder builds the OpenAI-compatible embedder.
func newOpenAIEmbedder(cfg KBConfig) (embed.Embedder, error) {
	o, err := embed.NewOpenAI(embed.OpenAIConfig{
		BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Model: cfg.OpenAIModel,
		Dimensions: cfg.OpenAIDimensions, SendDimensions: cfg.OpenAISendDimensions,
		BatchSize: cfg.EmbedBatch, Timeout: cfg.EmbedTimeout, Concurrency: cfg.EmbedConcurrency, MaxRetries: cfg.EmbedRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("--embedder openai: %w", err)
	}
	return o, nil
}
