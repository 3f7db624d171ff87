package cmd

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/sqldb"
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
			if storage.IsPostgresURL(from) {
				return errors.New("--from names a PostgreSQL database: migrate-db copies from a SQLite file (e.g. --from ./agentd.db)")
			}
			if !storage.IsPostgresURL(to) {
				return errors.New("--to must be a postgres:// or postgresql:// URL of an empty PostgreSQL database")
			}
			if st, err := os.Stat(from); err != nil || !st.Mode().IsRegular() {
				return fmt.Errorf("no SQLite database at %s", from)
			}
			target := storage.PostgresName(to)
			src, err := storage.Open(c.Context(), from)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := storage.Open(c.Context(), to)
			if err != nil {
				return err
			}
			defer dst.Close()
			errOut := c.ErrOrStderr()
			fmt.Fprintf(errOut, "copying %s to PostgreSQL %s\n", from, target)
			rep, err := storage.Copy(c.Context(), src, dst, func(table string, n int64) {
				fmt.Fprintf(errOut, "  %s: %d row(s)\n", table, n)
			})
			if err == nil || errors.Is(err, storage.ErrCountMismatch) {
				if perr := printCopyReport(c, g, from, target, rep, err == nil); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil && !errors.Is(err, storage.ErrNotEmpty) && !errors.Is(err, storage.ErrCountMismatch) {
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

// printCopyReport prints each table's counts, then one line on the whole
// copy (or the JSON of it).
func printCopyReport(c *cobra.Command, g *globals, from, target string, rep sqldb.CopyReport, ok bool) error {
	secs := rep.Took.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(rep.Rows) / secs
	}
	if g.json {
		return printJSON(c.OutOrStdout(), struct {
			From      string                `json:"from"`
			To        string                `json:"to"`
			Verified  bool                  `json:"verified"`
			Rows      int64                 `json:"rows"`
			Seconds   float64               `json:"seconds"`
			Tables    []sqldb.TableCount    `json:"tables"`
			Sequences []sqldb.SequenceReset `json:"sequences"`
		}{from, target, ok, rep.Rows, secs, rep.Tables, rep.Sequences})
	}
	tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tSQLITE\tPOSTGRESQL")
	for _, t := range rep.Tables {
		mark := ""
		if t.Source != t.Target || t.Copied != t.Source {
			mark = "  <- differs"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d%s\n", t.Table, t.Source, t.Target, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ok {
		fmt.Fprintf(c.OutOrStdout(), "copied %d rows from %s to %s in %s (%.0f rows/s), %d sequences reset; every table's count matches\n",
			rep.Rows, from, target, rep.Took.Round(1e6), rate, len(rep.Sequences))
	}
	return nil
}
