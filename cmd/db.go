package cmd

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/orgstore"
)

// openDB opens the database named by --db for a CLI command; it may be open
// in a running server at the same time. Events the command causes (a
// cancelled call, an import) record what changed; they are rendered where
// they leave a process, as the server's are.
func openDB(ctx context.Context, g *globals) (*storage.Stores, error) {
	return storage.Open(ctx, g.db)
}

// resolveOrg finds ORG by name or id; with one organization in the
// database, an empty ORG means that one.
func resolveOrg(ctx context.Context, db *storage.Stores, org string) (orgstore.Org, error) {
	if org != "" {
		return db.Orgs.FindOrg(ctx, org)
	}
	orgs, err := db.Orgs.ListOrgs(ctx)
	if err != nil {
		return orgstore.Org{}, err
	}
	switch len(orgs) {
	case 0:
		return orgstore.Org{}, fmt.Errorf("no organization yet: run 'agentd serve' once or 'agentd org create NAME'")
	case 1:
		return orgs[0], nil
	}
	return orgstore.Org{}, fmt.Errorf("%d organizations: say which with --org NAME|ID", len(orgs))
}

// inOrg opens the database, resolves ORG and runs fn; the database is
// closed when fn returns. Most CLI commands are this plus their own work.
func inOrg(ctx context.Context, g *globals, org string, fn func(db *storage.Stores, o orgstore.Org) error) error {
	db, err := openDB(ctx, g)
	if err != nil {
		return err
	}
	defer db.Close()
	o, err := resolveOrg(ctx, db, org)
	if err != nil {
		return err
	}
	return fn(db, o)
}
