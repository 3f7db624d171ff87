package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/secretbox"
)

// newSecrets is `agentd secrets rotate`: re-encrypt the stored secrets
// under a new key (issue 27 item 9).
func newSecrets(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "secrets", Short: "Manage the key that encrypts stored secrets (webhook signing secrets)"}
	var newKey string
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Re-encrypt every stored secret under a new key (restart the server after)",
		Long: `rotate re-encrypts every stored secret (webhook signing secrets, and any still in plain
text from before encryption) under a new key, in one transaction.

SQLite with its key file (DB.key, 0600, beside the database): a new key is made and
replaces the file; nothing else to do. With AGENTD_SECRET_KEY (and always on PostgreSQL):
pass the new key with --new-key (make one with: openssl rand -base64 32), then set
AGENTD_SECRET_KEY to it. Restart running servers either way: they hold the old key.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var k []byte
			if newKey != "" {
				var err error
				if k, err = secretbox.ParseKey(newKey); err != nil {
					return err
				}
			}
			n, err := rotateSecretKey(c.Context(), g, k)
			if err != nil {
				return err
			}
			where := secretbox.KeyFile(g.db)
			if isPostgres(g.db) || os.Getenv(secretbox.EnvKey) != "" {
				where = secretbox.EnvKey + " (set it to the new key now)"
			}
			if g.json {
				return printJSON(c.OutOrStdout(), map[string]any{"resealed": n, "key": where})
			}
			fmt.Fprintf(c.OutOrStdout(), "%d secrets re-encrypted; the key is in %s; restart the server\n", n, where)
			return nil
		},
	}
	rotate.Flags().StringVar(&newKey, "new-key", "", "the new key, base64 or hex of 32 bytes (required with AGENTD_SECRET_KEY or PostgreSQL)")
	c.AddCommand(rotate)
	return c
}
