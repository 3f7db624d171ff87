package cmd

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
)

func newKey(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "key", Short: "Manage API keys"}
	var org, user, name string
	var days, rate int
	var never bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key and print it once",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				orgs := f.Stores.Orgs
				u, err := orgs.FirstOwner(c.Context(), o.ID)
				if user != "" {
					u, err = orgs.FindUser(c.Context(), o.ID, user)
				}
				if err != nil {
					return fmt.Errorf("user of the key: %w", err)
				}
				opts := access.KeyOptions{Name: name, RateLimit: rate, Never: never}
				if c.Flags().Changed("expires-in-days") {
					opts.ExpiresInDays = &days
				}
				key, k, err := f.Access.CreateKey(c.Context(), o.ID, u.ID, opts)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"id": k.ID, "key": key, "name": k.Name, "org": o.Name,
						"user": u.Email, "role": u.Role, "rateLimitPerMinute": k.RateLimit, "expiresAt": k.ExpiresAt})
				}
				exp := "never"
				if k.ExpiresAt != nil {
					exp = k.ExpiresAt.Format(time.RFC3339)
				}
				fmt.Fprintf(c.OutOrStdout(), "key %s for %s (%s) in %s, expires %s\napi key: %s\n", k.ID, u.Email, u.Role, o.Name, exp, key)
				return nil
			})
		},
	}
	f := create.Flags()
	f.StringVar(&org, "org", "", "organization name or id (optional with one organization)")
	f.StringVar(&user, "user", "", "email of the key's user (default: the organization's first owner)")
	f.StringVar(&name, "name", "", "a name to recognise the key by")
	f.IntVar(&days, "expires-in-days", 30, "lifetime in days")
	f.BoolVar(&never, "never-expires", false, "a key without expiry")
	f.IntVar(&rate, "rate-limit", 1000, "requests per minute")
	list := &cobra.Command{
		Use:   "list",
		Short: "List API keys (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				ks, err := f.Stores.Orgs.ListKeys(c.Context(), o.ID)
				if err != nil {
					return err
				}
				if g.json {
					out := []map[string]any{}
					for _, k := range ks {
						out = append(out, map[string]any{"id": k.ID, "name": k.Name, "prefix": k.Prefix, "user": k.UserEmail,
							"rateLimitPerMinute": k.RateLimit, "expiresAt": k.ExpiresAt, "revokedAt": k.RevokedAt, "createdAt": k.CreatedAt})
					}
					return printJSON(c.OutOrStdout(), out)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tUSER\tEXPIRES\tREVOKED")
				for _, k := range ks {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.UserEmail, when(k.ExpiresAt, "never"), when(k.RevokedAt, "-"))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&org, "org", "", "organization name or id (optional with one organization)")
	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke an API key; it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withSet(c.Context(), g, features.Config{}, func(f *features.Set) error {
				if err := f.Stores.Orgs.RevokeKey(c.Context(), "", args[0]); err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"id": args[0], "revoked": true})
				}
				fmt.Fprintf(c.OutOrStdout(), "key %s revoked\n", args[0])
				return nil
			})
		},
	}
	c.AddCommand(create, list, revoke)
	return c
}

func when(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Format("2006-01-02 15:04")
}
