package cmd

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// opsCommands are the operator's commands: backup, restore, doctor.
func opsCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newBackup(g), newRestore(g), newDoctor(g), newSecrets(g)}
}

func newBackup(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent copy of the database to FILE and check it (safe while the server runs)",
		Long: `backup copies the database named by --db to FILE with SQLite's VACUUM INTO: one
snapshot, holding every write committed before the backup began, taken without stopping
the server (writers go on meanwhile). The copy is checked with PRAGMA integrity_check and
only then given its name. FILE must not exist.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if isPostgres(g.db) {
				return errNotSQLite("backup")
			}
			start := time.Now()
			if err := backupDB(c.Context(), g.db, args[0]); err != nil {
				return err
			}
			st, err := os.Stat(args[0])
			if err != nil {
				return err
			}
			took := time.Since(start).Round(time.Millisecond)
			if g.json {
				return printJSON(c.OutOrStdout(), map[string]any{"source": g.db, "backup": args[0], "bytes": st.Size(),
					"integrity": "ok", "seconds": took.Seconds()})
			}
			fmt.Fprintf(c.OutOrStdout(), "backup of %s written to %s (%d bytes, integrity ok, %s)\n", g.db, args[0], st.Size(), took)
			return nil
		},
	}
}

func newRestore(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the database with the backup FILE (refused while any process has the database open)",
		Long: `restore checks FILE with PRAGMA integrity_check, then replaces the database named by
--db with it. It refuses while any process has that database open (a running agentd
serve, another agentd command, litestream, the sqlite3 shell): stop them first. The check
is SQLite's own lock, taken exclusively and held for the whole copy, so a server started
meanwhile fails with "database is locked" rather than reading half a restore.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if isPostgres(g.db) {
				return errNotSQLite("restore")
			}
			err := restoreDB(c.Context(), args[0], g.db)
			if errors.Is(err, errInUse) {
				return fmt.Errorf("restore refused: %s is open in another process (agentd serve, litestream, sqlite3?); stop it, then restore", g.db)
			}
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(c.OutOrStdout(), map[string]any{"backup": args[0], "database": g.db, "integrity": "ok"})
			}
			fmt.Fprintf(c.OutOrStdout(), "%s restored from %s (integrity ok)\n", g.db, args[0])
			return nil
		},
	}
}

// errNotSQLite refuses backup and restore of a PostgreSQL database (whose
// URL may hold a password, so it is not echoed).
func errNotSQLite(cmd string) error {
	return fmt.Errorf("%s works on SQLite files; for PostgreSQL use pg_dump and pg_restore (or the provider's snapshots)", cmd)
}
