package cmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/agentd/agentd/app/features"
	"github.com/spf13/cobra"
)

func newOrg(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "org", Short: "Manage organizations"}
	var owner string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an organization with its owner and print the owner's API key once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withSet(c.Context(), g, features.Config{}, func(f *features.Set) error {
				o, key, k, err := f.Access.CreateOrg(c.Context(), args[0], owner)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"id": o.ID, "name": o.Name, "owner": owner,
						"keyId": k.ID, "key": key, "expiresAt": k.ExpiresAt})
				}
				fmt.Fprintf(c.OutOrStdout(), "organization %s (%s) created, owner %s\nowner API key: %s\n", o.Name, o.ID, owner, key)
				return nil
			})
		},
	}
	create.Flags().StringVar(&owner, "owner", "owner@localhost", "owner's email")
	list := &cobra.Command{
		Use:   "list",
		Short: "List organizations",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withSet(c.Context(), g, features.Config{}, func(f *features.Set) error {
				orgs, err := f.Stores.Orgs.ListOrgs(c.Context())
				if err != nil {
					return err
				}
				if g.json {
					out := []map[string]any{}
					for _, o := range orgs {
						out = append(out, map[string]any{"id": o.ID, "name": o.Name, "createdAt": o.CreatedAt})
					}
					return printJSON(c.OutOrStdout(), out)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tCREATED")
				for _, o := range orgs {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", o.ID, o.Name, o.CreatedAt.Format("2006-01-02 15:04"))
				}
				return tw.Flush()
			})
		},
	}
	c.AddCommand(create, list)
	return c
}
