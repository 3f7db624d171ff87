package cmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func newMigrateDB(g *globals) *cobra.Command {
	var from, to string
	c := &cobra.Command{
		Use:   "migrate-db --from FILE --to postgres://...",
		Short: "Copy a whole install from a SQLite file into an empty PostgreSQL database and verify it",
		Long: `migrate-db copies every table of the SQLite database --from (default: --db) into the
PostgreSQL database --to: organizations, users, keys, agents, knowledge with its vectors,
listings, calls, campaigns, webhooks and their deliveries, events, sessions. The target is
brought to the newest schema first and must hold no rows (create a new database and do not
start agentd on it before). Everything goes in one PostgreSQL transaction: the row count of
every table is checked against the source before the commit, and on any error or
difference nothing is committed and the command exits non-zero. The source is only read
(once brought to the newest schema, as any start of agentd does).

Stop agentd first: no agentd (server or command) may run on either database during the
copy. Afterwards start agentd with --db set to the PostgreSQL URL.

The URL is never printed (only host and database). To keep the password off the command
line, leave it out of the URL and set PGPASSWORD or use ~/.pgpass.`,
		Example: "  agentd migrate-db --from ./agentd.db --to postgres://agentd@db.internal:5432/agentd",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if from == "" {
				from = g.db
			}
			if isPostgres(from) {
				return errors.New("--from names a PostgreSQL database: migrate-db copies from a SQLite file (e.g. --from ./agentd.db)")
			}
			if !isPostgres(to) {
				return errors.New("--to must be a postgres:// or postgresql:// URL of an empty PostgreSQL database")
			}
			if st, err := os.Stat(from); err != nil || !st.Mode().IsRegular() {
				return fmt.Errorf("no SQLite database at %s", from)
			}
			target := postgresName(to)
			errOut := c.ErrOrStderr()
			rep, err := copyDB(c.Context(), from, to, func() { fmt.Fprintf(errOut, "copying %s to PostgreSQL %s\n", from, target) },
				func(table string, n int64) { fmt.Fprintf(errOut, "  %s: %d row(s)\n", table, n) })
			if err == nil || errors.Is(err, errCountMismatch) {
				if perr := printCopyReport(c, g, from, target, rep, err == nil); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil && !errors.Is(err, errNotEmpty) && !errors.Is(err, errCountMismatch) {
				err = fmt.Errorf("%w (nothing was committed to %s)", err, target)
			}
			return err
		},
	}
	c.Flags().StringVar(&from, "from", "", "SQLite database file to copy (default: the --db value)")
	c.Flags().StringVar(&to, "to", "", "postgres:// URL of the empty target database")
	c.MarkFlagRequired("to")
	return c
}
