package cmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app"
	"github.com/agentd/agentd/storage"
)

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

func (f *jobFlags) input(c *cobra.Command) app.JobInput {
	str := func(flag string, v *string) *string {
		if c.Flags().Changed(flag) {
			return v
		}
		return nil
	}
	return app.JobInput{AgentID: str("agent", &f.agent), Name: str("name", &f.name), Status: str("status", &f.status),
		TriggerType: str("trigger", &f.trigger), TrustLevel: str("trust", &f.trust)}
}

func newJobCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "job", Short: "Manage the jobs assigned to agents (same rules as /api/v2/jobs)"}
	var org string
	cmd.PersistentFlags().StringVar(&org, "org", "", "organization name or id (optional with one organization)")
	show := func(c *cobra.Command, j storage.Job, verb string) error {
		if g.json {
			return printJSON(c.OutOrStdout(), app.ViewJob(j))
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
			return withOrg(c, g, org, func(db *storage.DB, orgID string) error {
				j, err := app.CreateJob(c.Context(), db, orgID, cf.input(c))
				if err != nil {
					return err
				}
				return show(c, j, "created")
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
			return withOrg(c, g, org, func(db *storage.DB, orgID string) error {
				js, err := app.ListJobs(c.Context(), db, orgID, agent)
				if err != nil {
					return err
				}
				if g.json {
					out := make([]app.JobView, 0, len(js))
					for _, j := range js {
						out = append(out, app.ViewJob(j))
					}
					return printJSON(c.OutOrStdout(), out)
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
			return withOrg(c, g, org, func(db *storage.DB, orgID string) error {
				j, err := app.UpdateJob(c.Context(), db, orgID, args[0], uf.input(c))
				if err != nil {
					return err
				}
				return show(c, j, "updated")
			})
		},
	}
	uf.register(update)
	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a job",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withOrg(c, g, org, func(db *storage.DB, orgID string) error {
				if err := app.DeleteJob(c.Context(), db, orgID, args[0]); err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), map[string]any{"id": args[0], "deleted": true})
				}
				fmt.Fprintf(c.OutOrStdout(), "job %s deleted\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, update, del)
	return cmd
}
