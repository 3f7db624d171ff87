package cmd

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/cmd/cliflags"
)

// addKBFlags adds the knowledge-base flags of serve (embedder, worker).
func addKBFlags(c *cobra.Command, cfg *kb.Config) {
	f := c.Flags()
	f.StringVar(&cfg.Embedder, "embedder", cliflags.String("AGENTD_EMBEDDER", "builtin"), "knowledge embedder: builtin (offline, lexical) or openai (any OpenAI-compatible /v1/embeddings) (env AGENTD_EMBEDDER)")
	f.IntVar(&cfg.EmbedDims, "embed-dims", cliflags.Int("AGENTD_EMBED_DIMS", 1024), "vector length of the builtin embedder (env AGENTD_EMBED_DIMS)")
	f.StringVar(&cfg.OpenAIBaseURL, "openai-base-url", cliflags.String("AGENTD_OPENAI_BASE_URL", "https://api.openai.com"), "base URL of the OpenAI-compatible embeddings service, with or without /v1 (env AGENTD_OPENAI_BASE_URL)")
	f.StringVar(&cfg.OpenAIAPIKey, "openai-api-key", cliflags.String("AGENTD_OPENAI_API_KEY", ""), "API key of the embeddings service; prefer the env var (env AGENTD_OPENAI_API_KEY)")
	f.StringVar(&cfg.OpenAIModel, "openai-model", cliflags.String("AGENTD_OPENAI_MODEL", "text-embedding-3-small"), "embedding model (env AGENTD_OPENAI_MODEL)")
	f.IntVar(&cfg.OpenAIDimensions, "openai-dimensions", cliflags.Int("AGENTD_OPENAI_DIMENSIONS", 1536), "vector length the model returns, checked on every vector (env AGENTD_OPENAI_DIMENSIONS)")
	f.BoolVar(&cfg.OpenAISendDimensions, "openai-send-dimensions", cliflags.Bool("AGENTD_OPENAI_SEND_DIMENSIONS", false), "send dimensions in requests, for models that shorten vectors on request (OpenAI text-embedding-3-*) (env AGENTD_OPENAI_SEND_DIMENSIONS)")
	f.IntVar(&cfg.EmbedBatch, "embed-batch", cliflags.Int("AGENTD_EMBED_BATCH", 64), "texts per embedding request (env AGENTD_EMBED_BATCH)")
	f.IntVar(&cfg.EmbedConcurrency, "embed-concurrency", cliflags.Int("AGENTD_EMBED_CONCURRENCY", 2), "embedding requests in flight (env AGENTD_EMBED_CONCURRENCY)")
	f.DurationVar(&cfg.EmbedTimeout, "embed-timeout", cliflags.Duration("AGENTD_EMBED_TIMEOUT", 0), "timeout of one embedding request; 0 means 30s (env AGENTD_EMBED_TIMEOUT)")
	f.Var(cliflags.NewRetries(&cfg.EmbedRetries, cliflags.Int("AGENTD_EMBED_RETRIES", 5)), "embed-retries", "retries of an embedding request on 429/5xx; 0 (or negative) means none (env AGENTD_EMBED_RETRIES)")
	f.IntVar(&cfg.Workers, "kb-workers", cliflags.Int("AGENTD_KB_WORKERS", 2), "knowledge sources chunked and embedded at once (env AGENTD_KB_WORKERS)")
	f.DurationVar(&cfg.Lease, "kb-lease", cliflags.Duration("AGENTD_KB_LEASE", 15*time.Second), "a source whose process stopped renewing its claim for this long is processed again (env AGENTD_KB_LEASE)")
	f.IntVar(&cfg.Retries, "kb-retries", cliflags.Int("AGENTD_KB_RETRIES", 5), "automatic retries of a source that failed because the embedding service was unavailable; 0 means 5, negative none (env AGENTD_KB_RETRIES)")
	f.DurationVar(&cfg.RetryBackoff, "kb-retry-backoff", cliflags.Duration("AGENTD_KB_RETRY_BACKOFF", 30*time.Second), "wait before the first automatic retry, doubled for each next one, at most 1h (env AGENTD_KB_RETRY_BACKOFF)")
	f.Float64Var(&cfg.SearchAlpha, "search-alpha", cliflags.Float("AGENTD_SEARCH_ALPHA", 0), "weight of the semantic half in hybrid search, 0 to 1; 0 means the embedder's default (builtin 0.15, external 0.7) (env AGENTD_SEARCH_ALPHA)")
	f.Float64Var(&cfg.SearchMinSimilarity, "search-min-similarity", cliflags.Float("AGENTD_SEARCH_MIN_SIMILARITY", 0), "similarity a hit without a query word needs to be returned; 0 means the embedder's default (builtin 0.6, external 0.35), negative none (env AGENTD_SEARCH_MIN_SIMILARITY)")
	f.DurationVar(&cfg.PollInterval, "kb-poll-interval", cliflags.Duration("AGENTD_KB_POLL_INTERVAL", 0), "how often the worker looks for sources queued by other processes; 0 means 2s (env AGENTD_KB_POLL_INTERVAL)")
	f.StringVar(&cfg.Rerank, "rerank", cliflags.String("AGENTD_RERANK", "none"), "reranker of hybrid search results: none or http (a /rerank API: TEI, Infinity, Jina, Cohere, llama.cpp) (env AGENTD_RERANK)")
	f.StringVar(&cfg.RerankURL, "rerank-url", cliflags.String("AGENTD_RERANK_URL", ""), "base URL of the reranker, used as given: /rerank is appended (http://tei:8080 for TEI, https://api.jina.ai/v1 for Jina) (env AGENTD_RERANK_URL)")
	f.StringVar(&cfg.RerankModel, "rerank-model", cliflags.String("AGENTD_RERANK_MODEL", ""), "reranking model (env AGENTD_RERANK_MODEL)")
	f.StringVar(&cfg.RerankAPIKey, "rerank-api-key", cliflags.String("AGENTD_RERANK_API_KEY", ""), "API key of the reranker; prefer the env var (env AGENTD_RERANK_API_KEY)")
	f.DurationVar(&cfg.RerankTimeout, "rerank-timeout", cliflags.Duration("AGENTD_RERANK_TIMEOUT", 2*time.Second), "budget of one rerank; past it the hybrid order stands and the search says so (env AGENTD_RERANK_TIMEOUT)")
	f.IntVar(&cfg.RerankDepth, "rerank-depth", cliflags.Int("AGENTD_RERANK_DEPTH", 30), "hybrid candidates the reranker reorders (env AGENTD_RERANK_DEPTH)")
}

// kbCommands are the knowledge commands (collection, reindex).
func kbCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newCollection(g), newReindex(g)}
}

func newCollection(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "collection", Short: "Manage knowledge collections"}
	var org, desc string
	c.PersistentFlags().StringVar(&org, "org", "", "organization name or id (default: the only one)")
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a knowledge collection and print its id",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				col, err := f.KB.CreateCollection(c.Context(), o.ID, args[0], desc)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"id": col.ID, "name": col.Name, "description": col.Description, "createdAt": col.CreatedAt})
				}
				fmt.Fprintf(c.OutOrStdout(), "collection %s created: %s\n", col.Name, col.ID)
				return nil
			})
		},
	}
	create.Flags().StringVar(&desc, "description", "", "description")
	list := &cobra.Command{
		Use:   "list",
		Short: "List knowledge collections",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				cols, _, err := f.KB.ListCollections(c.Context(), o.ID, kb.Page{Limit: 1_000_000})
				if err != nil {
					return err
				}
				if g.json {
					out := []map[string]any{}
					for _, col := range cols {
						out = append(out, map[string]any{"id": col.ID, "name": col.Name, "description": col.Description,
							"sourceCount": col.SourceCount, "createdAt": col.CreatedAt})
					}
					return printJSON(c.OutOrStdout(), out)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSOURCES\tCREATED")
				for _, col := range cols {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", col.ID, col.Name, col.SourceCount, col.CreatedAt.Format("2006-01-02 15:04"))
				}
				return tw.Flush()
			})
		},
	}
	del := &cobra.Command{
		Use:   "delete NAME|ID",
		Short: "Delete a knowledge collection with its sources, chunks and vectors",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				col, err := f.KB.FindCollection(c.Context(), o.ID, args[0])
				if err != nil {
					return err
				}
				if _, err := f.KB.DeleteCollection(c.Context(), o.ID, col.ID); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "collection %s (%s) deleted\n", col.Name, col.ID)
				return nil
			})
		},
	}
	c.AddCommand(create, list, del)
	return c
}

func newReindex(g *globals) *cobra.Command {
	var cfg kb.Config
	var org, collection string
	var force, failed bool
	c := &cobra.Command{
		Use:   "reindex",
		Short: "Re-embed knowledge sources with the configured embedder (after an embedder change, all with --force, failed ones with --failed)",
		Long: `reindex compares the embedder selected by the flags with the one each collection's
vectors were made by. Collections indexed by another embedder lose their vectors and all
their sources are chunked and embedded again, here, before the command returns; unfinished
sources are processed too. It may run beside a running server (claims are leases in the
database). Give the server the same embedder flags, or it will reindex back at its start.
--failed retries every failed source now (a source that failed because the embedding
service was unavailable is also retried on its own, with backoff, by a running server).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withSet(c.Context(), g, features.Config{KB: cfg}, func(f *features.Set) error {
				colID := ""
				if collection != "" {
					o, err := resolveOrg(c.Context(), f, org)
					if err != nil {
						return err
					}
					col, err := f.KB.FindCollection(c.Context(), o.ID, collection)
					if err != nil {
						return err
					}
					colID = col.ID
				}
				out := c.OutOrStdout()
				shown := 0
				queued, done, err := f.KB.Reindex(c.Context(), kb.ReindexOptions{CollectionID: colID, Force: force, Failed: failed,
					Progress: func(done, backlog int) {
						if !g.json && done-shown >= 100 {
							shown = done
							fmt.Fprintf(out, "%d sources processed, %d waiting\n", done, backlog)
						}
					}})
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(out, map[string]any{"queued": queued, "processed": done})
				}
				fmt.Fprintf(out, "reindex done: %d sources queued, %d processed\n", queued, done)
				return nil
			})
		},
	}
	addKBFlags(c, &cfg)
	c.Flags().StringVar(&org, "org", "", "organization name or id for --collection (default: the only one)")
	c.Flags().StringVar(&collection, "collection", "", "only this collection (name or id)")
	c.Flags().BoolVar(&force, "force", false, "re-embed every source even when the embedder is unchanged")
	c.Flags().BoolVar(&failed, "failed", false, "retry every failed source")
	return c
}
