package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/app/access"
)

// firstRun runs last in Open, after every setting was checked and every
// feature wired, so that a start that fails creates no organization and
// prints no key. On an empty database it creates organization "default"
// and prints its owner key once, with its expiry on the same line (keys
// expire after access.KeyTTL, 30 days; scripts take the fourth field). On
// a database where an organization has no usable owner or admin key left
// (all expired or revoked) it logs how to make one, on stderr.
func (a *App) firstRun(ctx context.Context) error {
	key, expires, created, err := access.BootstrapOwner(ctx, a.db)
	if err != nil {
		return fmt.Errorf("first-run setup: %w", err)
	}
	if created {
		fmt.Fprintf(a.cfg.Out, "owner API key: %s (expires %s; make another with: agentd key create)\n",
			key, expires.Format("2006-01-02"))
		link, err := a.setupLink(ctx)
		if err != nil {
			return fmt.Errorf("first-run setup link: %w", err)
		}
		fmt.Fprintf(a.cfg.Out, "setup link: %s\n", link)
		return nil
	}
	orgs, err := a.db.OrgsWithoutAdminKey(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("first-run check: %w", err)
	}
	for _, o := range orgs {
		a.log.Warn(fmt.Sprintf("organization %s has no usable owner or admin API key (expired or revoked); make one with: agentd key create --org %s", o.Name, o.Name),
			"org", o.Name)
	}
	return nil
}

// setupLink makes the one-time link (valid an hour) with which the first
// owner sets a dashboard password.
func (a *App) setupLink(ctx context.Context) (string, error) {
	o, err := a.db.FindOrg(ctx, "default")
	if err != nil {
		return "", err
	}
	u, err := a.db.FirstOwner(ctx, o.ID)
	if err != nil {
		return "", err
	}
	token, err := access.NewSetupToken(ctx, a.db, u.ID, time.Now().UTC())
	if err != nil {
		return "", err
	}
	base := strings.TrimRight(a.cfg.PublicURL, "/")
	if base == "" {
		base = "http://" + a.ln.Addr().String()
	}
	return base + "/setup?token=" + token, nil
}
