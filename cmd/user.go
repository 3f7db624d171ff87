package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
)

func newUser(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "user", Short: "Manage the users of an organization"}
	var org, role string
	add := &cobra.Command{
		Use:   "add EMAIL",
		Short: "Add a user with a role",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !access.ValidRole(role) {
				return fmt.Errorf("--role %q: use one of %s", role, strings.Join(access.Roles, ", "))
			}
			if err := access.ValidEmail(args[0]); err != nil {
				return err
			}
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				u, err := f.Stores.Orgs.AddUser(c.Context(), o.ID, args[0], role)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"id": u.ID, "org": o.Name, "email": u.Email, "role": u.Role})
				}
				fmt.Fprintf(c.OutOrStdout(), "user %s added to %s as %s\n", u.Email, o.Name, u.Role)
				return nil
			})
		},
	}
	add.Flags().StringVar(&role, "role", "member", "owner, admin, member or viewer")
	remove := &cobra.Command{
		Use:   "remove EMAIL",
		Short: "Remove a user; their API keys stop working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				if err := f.Stores.Orgs.RemoveUser(c.Context(), o.ID, args[0]); err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"removed": args[0], "org": o.Name})
				}
				fmt.Fprintf(c.OutOrStdout(), "user %s removed from %s\n", args[0], o.Name)
				return nil
			})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the users of an organization",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				us, err := f.Stores.Orgs.ListUsers(c.Context(), o.ID)
				if err != nil {
					return err
				}
				if g.json {
					out := []map[string]any{}
					for _, u := range us {
						out = append(out, map[string]any{"id": u.ID, "email": u.Email, "role": u.Role, "createdAt": u.CreatedAt})
					}
					return printJSON(c.OutOrStdout(), out)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "EMAIL\tROLE\tID")
				for _, u := range us {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Email, u.Role, u.ID)
				}
				return tw.Flush()
			})
		},
	}
	password := &cobra.Command{
		Use:   "password EMAIL",
		Short: "Set a user's dashboard password, read from standard input; signs them out everywhere",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			pw, err := readPassword(c)
			if err != nil {
				return err
			}
			return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
				u, err := f.Stores.Orgs.FindUser(c.Context(), o.ID, args[0])
				if err != nil {
					return fmt.Errorf("user %s: %w", args[0], err)
				}
				if err := f.Access.SetPassword(c.Context(), u.ID, pw); err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"email": u.Email, "org": o.Name, "passwordSet": true})
				}
				fmt.Fprintf(c.OutOrStdout(), "password set for %s in %s\n", u.Email, o.Name)
				return nil
			})
		},
	}
	for _, sc := range []*cobra.Command{add, remove, list, password} {
		sc.Flags().StringVar(&org, "org", "", "organization name or id (optional with one organization)")
	}
	c.AddCommand(add, remove, list, password)
	return c
}

// readPassword reads one line from standard input: typed without echo on a
// terminal, piped otherwise (echo "$PW" | agentd user password EMAIL). The
// password never appears in arguments, so it stays out of shell history and
// the process list.
func readPassword(c *cobra.Command) (string, error) {
	in := c.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(c.ErrOrStderr(), "new password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(c.ErrOrStderr())
		return string(b), err
	}
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input")
	}
	return line, nil
}
