package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/features"
)

// agentCommands are the agent commands (agent create|list|get|update|delete)
// and the job commands (job create|list|update|delete).
func agentCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newAgentCmd(g), newJobCmd(g)}
}

// agentFlags are the writable agent fields as flags; only flags given on
// the command line become part of the input.
type agentFlags struct {
	name, typ, status, model, instructions, instructionsFile, config, tools, specialty, displayRole string
	phones                                                                                          []string
}

func (f *agentFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.name, "name", "", "agent name (1-200 characters)")
	fl.StringVar(&f.typ, "type", "", "voice or chat")
	fl.StringVar(&f.status, "status", "", "active (default), inactive, training or deployed")
	fl.StringVar(&f.model, "model", "", "model name")
	fl.StringVar(&f.instructions, "instructions", "", "instructions (system prompt)")
	fl.StringVar(&f.instructionsFile, "instructions-file", "", "read the instructions from this file")
	fl.StringVar(&f.config, "config", "", `config JSON, e.g. '{"voice":"alloy","speed":1.1}' or '{"theme":"dark","primaryColor":"#112233"}'`)
	fl.StringVar(&f.tools, "tools", "", `tools JSON array, e.g. '[{"id":"t1","name":"lookup","description":"..."}]'`)
	fl.StringArrayVar(&f.phones, "phone", nil, "E.164 phone number of a voice agent (repeat for more; --phone '' clears on update)")
	fl.StringVar(&f.specialty, "specialty", "", "specialty shown on the worker view")
	fl.StringVar(&f.displayRole, "display-role", "", "role shown on the worker view")
}

// agentListJSON is the --json output of agent list.
type agentListJSON struct {
	Agents  []agents.View `json:"agents"`
	HasMore bool          `json:"hasMore"`
}

// input builds the agent input from the flags the user set.
func (f *agentFlags) input(c *cobra.Command) (agents.Input, error) {
	var in agents.Input
	str := func(flag string, v *string) *string {
		if c.Flags().Changed(flag) {
			return v
		}
		return nil
	}
	in.Name, in.Type, in.Status, in.Model = str("name", &f.name), str("type", &f.typ), str("status", &f.status), str("model", &f.model)
	in.Instructions, in.Specialty, in.DisplayRole = str("instructions", &f.instructions), str("specialty", &f.specialty), str("display-role", &f.displayRole)
	if c.Flags().Changed("instructions-file") {
		if in.Instructions != nil {
			return in, fmt.Errorf("use --instructions or --instructions-file, not both")
		}
		b, err := os.ReadFile(f.instructionsFile)
		if err != nil {
			return in, err
		}
		s := string(b)
		in.Instructions = &s
	}
	if c.Flags().Changed("config") {
		in.Config = json.RawMessage(f.config)
	}
	if c.Flags().Changed("tools") {
		in.Tools = json.RawMessage(f.tools)
	}
	if c.Flags().Changed("phone") {
		phones := []string{}
		for _, p := range f.phones {
			if strings.TrimSpace(p) != "" {
				phones = append(phones, p)
			}
		}
		in.PhoneNumbers = &phones
	}
	return in, nil
}

// withOrg opens the feature set and resolves --org for a command body.
func withOrg(c *cobra.Command, g *globals, org string, fn func(f *features.Set, orgID string) error) error {
	return inOrg(c.Context(), g, org, func(f *features.Set, o orgRef) error {
		return fn(f, o.ID)
	})
}

func newAgentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Manage agents (same rules as /api/v1/agents)"}
	var org string
	cmd.PersistentFlags().StringVar(&org, "org", "", "organization name or id (optional with one organization)")
	show := func(c *cobra.Command, a agents.View, verb string) error {
		if g.json {
			return printJSON(c.OutOrStdout(), a)
		}
		printAgent(c, a, verb)
		return nil
	}

	var cf agentFlags
	create := &cobra.Command{
		Use:   "create --name NAME --type voice|chat",
		Short: "Create an agent",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			in, err := cf.input(c)
			if err != nil {
				return err
			}
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				a, err := f.Agents.Create(c.Context(), orgID, in)
				if err != nil {
					return err
				}
				return show(c, agents.NewView(a), "created")
			})
		},
	}
	cf.register(create)

	var q agents.Query
	list := &cobra.Command{
		Use:   "list",
		Short: "List agents, newest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				as, more, err := f.Agents.List(c.Context(), orgID, q)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), agentListJSON{Agents: agents.NewViews(as), HasMore: more})
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tTYPE\tSTATUS\tNAME\tPHONES\tCREATED")
				for _, a := range as {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Type, a.Status, a.Name,
						strings.Join(a.PhoneNumbers, " "), a.CreatedAt.Format("2006-01-02 15:04"))
				}
				if more {
					fmt.Fprintf(tw, "(more: --offset %d)\n", q.Offset+len(as))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&q.Type, "type", "", "voice or chat")
	list.Flags().StringVar(&q.Status, "status", "", "active, inactive, training or deployed")
	list.Flags().IntVar(&q.Limit, "limit", 50, "agents per page (1-100)")
	list.Flags().IntVar(&q.Offset, "offset", 0, "agents to skip")

	get := &cobra.Command{
		Use:   "get ID",
		Short: "Show an agent with its instructions, config and tools",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				a, err := f.Agents.Get(c.Context(), orgID, args[0])
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), agents.NewView(a))
				}
				printAgent(c, agents.NewView(a), "")
				fmt.Fprintf(c.OutOrStdout(), "model: %s\nconfig: %s\ntools: %s\ninstructions:\n%s\n", a.Model, a.Config, a.Tools, a.Instructions)
				return nil
			})
		},
	}

	var uf agentFlags
	update := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change the given fields of an agent (config, tools and phones are replaced whole)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			in, err := uf.input(c)
			if err != nil {
				return err
			}
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				a, err := f.Agents.Update(c.Context(), orgID, args[0], in)
				if err != nil {
					return err
				}
				return show(c, agents.NewView(a), "updated")
			})
		},
	}
	uf.register(update)

	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete an agent: it becomes inactive and stays listed",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				a, err := f.Agents.Delete(c.Context(), orgID, args[0])
				if err != nil {
					return err
				}
				return show(c, agents.NewView(a), "deleted (now inactive)")
			})
		},
	}
	cmd.AddCommand(create, list, get, update, del)
	return cmd
}

// printAgent prints the one-line summary of an agent.
func printAgent(c *cobra.Command, a agents.View, verb string) {
	if verb != "" {
		verb = " " + verb
	}
	phones := ""
	if a.PhoneNumbers != nil && len(*a.PhoneNumbers) > 0 {
		phones = ", phones " + strings.Join(*a.PhoneNumbers, " ")
	}
	fmt.Fprintf(c.OutOrStdout(), "agent %s (%s, %s, %s)%s%s\n", a.ID, a.Name, a.Type, a.Status, verb, phones)
}
