package access

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/storage/orgstore"
)

// FirstRun is what a start finds: on an empty database it creates the
// organization "default" with its owner and returns the lines to print
// once (the owner key with its expiry, KeyTTL from now, and a one-time
// setup link valid an hour, under baseURL); otherwise it returns the
// organizations left without a usable owner or admin key (all expired or
// revoked), for which the start says how to make one.
func (db *Service) FirstRun(ctx context.Context, baseURL string, now time.Time) (lines []string, orphans []orgstore.Org, err error) {
	key, expires, created, err := db.BootstrapOwner(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("first-run setup: %w", err)
	}
	if !created {
		orphans, err = db.orgs.OrgsWithoutAdminKey(ctx, now)
		if err != nil {
			return nil, nil, fmt.Errorf("first-run check: %w", err)
		}
		return nil, orphans, nil
	}
	lines = append(lines, fmt.Sprintf("owner API key: %s (expires %s; make another with: agentd key create)",
		key, expires.Format("2006-01-02")))
	o, err := db.orgs.FindOrg(ctx, "default")
	if err != nil {
		return nil, nil, fmt.Errorf("first-run setup link: %w", err)
	}
	u, err := db.orgs.FirstOwner(ctx, o.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("first-run setup link: %w", err)
	}
	token, err := db.NewSetupToken(ctx, u.ID, now.UTC())
	if err != nil {
		return nil, nil, fmt.Errorf("first-run setup link: %w", err)
	}
	return append(lines, "setup link: "+strings.TrimRight(baseURL, "/")+"/setup?token="+token), nil, nil
}
