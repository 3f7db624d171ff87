package llm

import (
	"errors"
	"fmt"
	"time"
)

// Config selects the model (serve's --llm flags).
type Config struct {
	Kind          string // builtin (default) or openai
	URL           string // openai: base URL, e.g. http://127.0.0.1:11434/v1
	Model         string // openai: default model; an agent's model overrides it
	APIKey        string
	Timeout       time.Duration // openai: bounds one model call; 0: 60 s
	ContextTokens int           // the model's context budget; 0: 8192
	// The conversation engine's bounds around the model (serve's
	// --turn-timeout, --tool-timeout); 0: the engine's defaults.
	TurnTimeout, ToolTimeout time.Duration
}

// New builds the configured model; builtin is nil (the engine quotes
// passages and never generates).
func New(cfg Config) (Model, error) {
	if cfg.ContextTokens < 0 || (cfg.ContextTokens > 0 && cfg.ContextTokens < 512) {
		return nil, fmt.Errorf("--llm-context-tokens %d: use at least 512", cfg.ContextTokens)
	}
	if cfg.Timeout < 0 || cfg.TurnTimeout < 0 || cfg.ToolTimeout < 0 {
		return nil, errors.New("--llm-timeout, --turn-timeout and --tool-timeout must not be negative")
	}
	switch cfg.Kind {
	case "", "builtin":
		return nil, nil
	case "openai":
		if cfg.URL == "" {
			return nil, errors.New("--llm openai: --llm-url is required (e.g. http://127.0.0.1:11434/v1)")
		}
		if cfg.Model == "" {
			return nil, errors.New("--llm openai: --llm-model is required")
		}
		m, err := NewOpenAI(OpenAIConfig{URL: cfg.URL, Model: cfg.Model, APIKey: cfg.APIKey, Timeout: cfg.Timeout})
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return m, nil
	}
	return nil, fmt.Errorf("--llm %q: use builtin or openai", cfg.Kind)
}
