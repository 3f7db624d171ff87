package cmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/llm"
	"github.com/agentd/agentd/cmd/cliflags"
)

// addLLMFlags gives serve (and doctor) the model conversations answer with.
func addLLMFlags(c *cobra.Command, cfg *llm.Config) {
	f := c.Flags()
	f.Var(cliflags.OneOf(&cfg.Kind, cliflags.String("AGENTD_LLM", "builtin"), "builtin", "openai"), "llm",
		"model agents answer with: builtin (quotes the knowledge base, generates nothing, no network) or openai (any OpenAI-compatible /chat/completions) (env AGENTD_LLM)")
	f.StringVar(&cfg.URL, "llm-url", cliflags.String("AGENTD_LLM_URL", ""), "base URL of the OpenAI-compatible service, with or without /v1, e.g. http://127.0.0.1:11434/v1 (env AGENTD_LLM_URL)")
	f.StringVar(&cfg.Model, "llm-model", cliflags.String("AGENTD_LLM_MODEL", ""), "model name; an agent's model field overrides it (env AGENTD_LLM_MODEL)")
	f.StringVar(&cfg.APIKey, "llm-api-key", cliflags.String("AGENTD_LLM_API_KEY", ""), "API key of the model service, sent as a Bearer token (env AGENTD_LLM_API_KEY)")
	f.DurationVar(&cfg.Timeout, "llm-timeout", cliflags.Duration("AGENTD_LLM_TIMEOUT", 60*time.Second), "time one model call may take; slower is a 504 (env AGENTD_LLM_TIMEOUT)")
	f.DurationVar(&cfg.TurnTimeout, "turn-timeout", cliflags.Duration("AGENTD_TURN_TIMEOUT", 120*time.Second), "time one conversation turn may take, every model round and tool call included; slower is a 504 (env AGENTD_TURN_TIMEOUT)")
	f.DurationVar(&cfg.ToolTimeout, "tool-timeout", cliflags.Duration("AGENTD_TOOL_TIMEOUT", 10*time.Second), "time one call of an agent's url tool may take (env AGENTD_TOOL_TIMEOUT)")
	f.IntVar(&cfg.ContextTokens, "llm-context-tokens", cliflags.Int("AGENTD_LLM_CONTEXT_TOKENS", 8192), "the model's context budget in cl100k tokens; history is trimmed to fit (env AGENTD_LLM_CONTEXT_TOKENS)")
}
