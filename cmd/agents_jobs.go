package cmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/features"
)

// jobDeletedJSON is the --json output of job delete.
type jobDeletedJSON struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

// jobFlags are the writable job fields as flags.
type jobFlags struct{ agent, name, status, trigger, trust string }

func (f *jobFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.agent, "agent", "", "id of the agent the job is assigned to")
	fl.StringVar(&f.name, "name", "", "job name (1-200 characters)")
	fl.StringVar(&f.status, "status", "", "active (default) or paused")
	fl.StringVar(&f.trigger, "trigger", "", "manual (default), schedule, inbound_call, outbound_campaign or webhook")
	fl.StringVar(&f.trust, "trust", "", "supervised (default), semi_autonomous or autonomous")
}

func (f *jobFlags) input(c *cobra.Command) agents.JobInput {
	str := func(flag string, v *string) *string {
		if c.Flags().Changed(flag) {
			return v
		}
		return nil
	}
	return agents.JobInput{AgentID: str("agent", &f.agent), Name: str("name", &f.name), Status: str("status", &f.status),
		TriggerType: str("trigger", &f.trigger), TrustLevel: str("trust", &f.trust)}
}

func newJobCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "job", Short: "Manage the jobs assigned to agents (same rules as /api/v2/jobs)"}
	var org string
	cmd.PersistentFlags().StringVar(&org, "org", "", "organization name or id (optional with one organization)")
	show := func(c *cobra.Command, j agents.JobView, verb string) error {
		if g.json {
			return printJSON(c.OutOrStdout(), j)
		}
		fmt.Fprintf(c.OutOrStdout(), "job %s (%s) of agent %s: %s, %s, %s %s\n", j.ID, j.Name, j.AgentID, j.Status, j.TriggerType, j.TrustLevel, verb)
		return nil
	}
	var cf jobFlags
	create := &cobra.Command{
		Use:   "create --agent ID --name NAME",
		Short: "Assign a new job to an agent",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				j, err := f.Agents.CreateJob(c.Context(), orgID, cf.input(c))
				if err != nil {
					return err
				}
				return show(c, agents.NewJobView(j), "created")
			})
		},
	}
	cf.register(create)
	var agent string
	list := &cobra.Command{
		Use:   "list",
		Short: "List jobs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				js, err := f.Agents.ListJobs(c.Context(), orgID, agent)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), agents.NewJobViews(js))
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tAGENT\tSTATUS\tTRIGGER\tTRUST\tNAME")
				for _, j := range js {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.AgentID, j.Status, j.TriggerType, j.TrustLevel, j.Name)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().StringVar(&agent, "agent", "", "only the jobs of this agent")
	var uf jobFlags
	update := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change the given fields of a job (--agent moves it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				j, err := f.Agents.UpdateJob(c.Context(), orgID, args[0], uf.input(c))
				if err != nil {
					return err
				}
				return show(c, agents.NewJobView(j), "updated")
			})
		},
	}
	uf.register(update)
	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a job",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withOrg(c, g, org, func(f *features.Set, orgID string) error {
				if err := f.Agents.DeleteJob(c.Context(), orgID, args[0]); err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), jobDeletedJSON{Deleted: true, ID: args[0]})
				}
				fmt.Fprintf(c.OutOrStdout(), "job %s deleted\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, update, del)
	return cmd
}
