package app

import (
	"context"
	"fmt"
	"time"
)

// firstRun runs last in Open, after every setting was checked and every
// feature wired, so that a start that fails creates no organization and
// prints no key (access.FirstRun). Scripts take the key line's fourth
// field; an organization without a usable key is named on stderr.
func (a *App) firstRun(ctx context.Context) error {
	base := a.cfg.PublicURL
	if base == "" {
		base = "http://" + a.ln.Addr().String()
	}
	lines, orphans, err := a.features.Access.FirstRun(ctx, base, time.Now())
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(a.cfg.Out, l)
	}
	if len(lines) == 0 && len(orphans) == 0 {
		// A second start (the README's first command made the database)
		// prints no key; say so rather than leave the operator waiting.
		a.log.Info("database already set up: no API key printed (only the first start prints one); make another with: agentd key create")
	}
	for _, o := range orphans {
		a.log.Warn(fmt.Sprintf("organization %s has no usable owner or admin API key (expired or revoked); make one with: agentd key create --org %s", o.Name, o.Name),
			"org", o.Name)
	}
	return nil
}
