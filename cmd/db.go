package cmd

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/sqldb"
)

// This file is the CLI's one door to the database: every command opens the
// feature set as agentd serve does, workers off, and calls the use cases the
// HTTP handlers call. No other file of cmd imports storage; the whole-database
// operations (backup, restore, copy, key rotation) are at the end.

// withSet opens the database named by --db and the features over it with
// cfg (workers off: features.Open, as serve and the tests), runs fn and
// closes both, while a server may have the database open too. Events the
// command causes are rendered where they leave a process.
func withSet(ctx context.Context, g *globals, cfg features.Config, fn func(f *features.Set) error) error {
	cfg.DBPath = g.db
	f, err := features.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

// orgRef is the organization a command acts in.
type orgRef struct{ ID, Name string }

// resolveOrg finds ORG by name or id; with one organization in the
// database, an empty ORG means that one.
func resolveOrg(ctx context.Context, f *features.Set, name string) (orgRef, error) {
	orgs := f.Stores.Orgs
	if name != "" {
		o, err := orgs.FindOrg(ctx, name)
		return orgRef{ID: o.ID, Name: o.Name}, err
	}
	all, err := orgs.ListOrgs(ctx)
	switch {
	case err != nil:
		return orgRef{}, err
	case len(all) == 0:
		return orgRef{}, fmt.Errorf("no organization yet: run 'agentd serve' once or 'agentd org create NAME'")
	case len(all) > 1:
		return orgRef{}, fmt.Errorf("%d organizations: say which with --org NAME|ID", len(all))
	}
	return orgRef{ID: all[0].ID, Name: all[0].Name}, nil
}

// inOrg opens the set, resolves ORG and runs fn; the set is closed when
// fn returns. Most CLI commands are this plus their own work.
func inOrg(ctx context.Context, g *globals, name string, fn func(f *features.Set, o orgRef) error) error {
	return inOrgWith(ctx, g, features.Config{}, name, fn)
}

// inOrgWith is inOrg with the features' settings cfg (workers off).
func inOrgWith(ctx context.Context, g *globals, cfg features.Config, name string, fn func(f *features.Set, o orgRef) error) error {
	return withSet(ctx, g, cfg, func(f *features.Set) error {
		o, err := resolveOrg(ctx, f, name)
		if err != nil {
			return err
		}
		return fn(f, o)
	})
}

// Whole-database operations: the file or the tables as they are, no
// feature involved.

var (
	isPostgres, postgresName = storage.IsPostgresURL, storage.PostgresName
	backupDB, restoreDB      = storage.Backup, storage.Restore
	errInUse, errNotEmpty    = storage.ErrInUse, storage.ErrNotEmpty
	errCountMismatch         = storage.ErrCountMismatch
)

// rotateSecretKey reseals every stored secret with key (a new one when nil).
func rotateSecretKey(ctx context.Context, g *globals, key []byte) (int, error) {
	db, err := storage.Open(ctx, g.db)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return storage.RotateSecretKey(ctx, db, key)
}

// copyDB copies the SQLite database from into the empty PostgreSQL
// database to; opened is called once both are open.
func copyDB(ctx context.Context, from, to string, opened func(), progress func(table string, n int64)) (sqldb.CopyReport, error) {
	src, err := storage.Open(ctx, from)
	if err != nil {
		return sqldb.CopyReport{}, err
	}
	defer src.Close()
	dst, err := storage.Open(ctx, to)
	if err != nil {
		return sqldb.CopyReport{}, err
	}
	defer dst.Close()
	opened()
	return storage.Copy(ctx, src, dst, progress)
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

// inspectFile reads the migration state of a database file for agentd
// doctor, creating nothing.
func inspectFile(ctx context.Context, path string) (sqldb.FileState, error) {
	return storage.InspectFile(ctx, path)
}
