package cmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/cmd/cliflags"
)

// addWebhookFlags adds the event delivery flags of serve.
func addWebhookFlags(c *cobra.Command, cfg *events.Config) {
	f := c.Flags()
	f.BoolVar(&cfg.AllowPrivate, "webhook-allow-private", cliflags.Bool("AGENTD_WEBHOOK_ALLOW_PRIVATE", false),
		"let webhook receivers live on loopback, private and link-local addresses: on-premises receivers and tests (env AGENTD_WEBHOOK_ALLOW_PRIVATE)")
	f.DurationVar(&cfg.Timeout, "webhook-timeout", cliflags.Duration("AGENTD_WEBHOOK_TIMEOUT", 10*time.Second), "time a receiver has to answer (env AGENTD_WEBHOOK_TIMEOUT)")
	f.DurationVar(&cfg.Lease, "webhook-lease", cliflags.Duration("AGENTD_WEBHOOK_LEASE", 0), "claim lease of a delivery; default timeout + 20s (env AGENTD_WEBHOOK_LEASE)")
	f.DurationVar(&cfg.Poll, "webhook-poll", cliflags.Duration("AGENTD_WEBHOOK_POLL", time.Second), "how often to look for events of other processes (env AGENTD_WEBHOOK_POLL)")
	f.MarkHidden("webhook-lease")
	f.MarkHidden("webhook-poll")
}

// webhookCommands are the webhook commands: create, list, delete,
// deliveries and retry, through the events feature the API calls.
func webhookCommands(g *globals) []*cobra.Command {
	root := &cobra.Command{Use: "webhook", Short: "Manage webhook endpoints and their deliveries"}
	var orgFlag string
	var allowPrivate bool
	root.PersistentFlags().StringVar(&orgFlag, "org", "", "organization name or id (default: the only one)")
	root.PersistentFlags().BoolVar(&allowPrivate, "webhook-allow-private", cliflags.Bool("AGENTD_WEBHOOK_ALLOW_PRIVATE", false),
		"accept receivers on loopback, private and link-local addresses (env AGENTD_WEBHOOK_ALLOW_PRIVATE)")
	// The endpoints' address rules are the server's, with this flag.
	inOrg := func(ctx context.Context, g *globals, name string, fn func(f *features.Set, o orgRef) error) error {
		return inOrgWith(ctx, g, features.Config{Webhooks: events.Config{AllowPrivate: allowPrivate}}, name, fn)
	}

	var types, desc string
	create := &cobra.Command{
		Use:   "create URL",
		Short: "Create a webhook endpoint; prints its signing secret once",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, o orgRef) error {
				ev := strings.Split(types, ",")
				w, err := f.Events.Create(c.Context(), o.ID, events.Input{URL: &args[0], Events: &ev, Description: &desc})
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), w)
				}
				fmt.Fprintf(c.OutOrStdout(), "webhook %s -> %s (%s)\nsigning secret (shown once): %s\n", w.ID, w.URL,
					strings.Join(w.Events, ","), w.Secret)
				return nil
			})
		},
	}
	create.Flags().StringVar(&types, "events", "*", "event types, comma-separated, or * for all")
	create.Flags().StringVar(&desc, "description", "", "what the endpoint is for")

	list := &cobra.Command{
		Use:   "list",
		Short: "List webhook endpoints (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, o orgRef) error {
				ws, err := f.Events.List(c.Context(), o.ID)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(c.OutOrStdout(), ws)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tURL\tEVENTS\tENABLED")
				for _, w := range ws {
					state := "yes"
					if !w.Enabled {
						state = "no"
						if w.DisabledReason != nil {
							state += ": " + *w.DisabledReason
						}
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.ID, w.URL, strings.Join(w.Events, ","), state)
				}
				return tw.Flush()
			})
		},
	}

	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a webhook endpoint with its deliveries",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, o orgRef) error {
				if err := f.Events.Delete(c.Context(), o.ID, args[0]); err != nil {
					return callCLIErr(err)
				}
				fmt.Fprintf(c.OutOrStdout(), "webhook %s deleted\n", args[0])
				return nil
			})
		},
	}

	var dq events.DeliveryQuery
	deliveries := &cobra.Command{
		Use:   "deliveries ID",
		Short: "List an endpoint's deliveries, newest first, with their attempts",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, o orgRef) error {
				page, err := f.Events.Deliveries(c.Context(), o.ID, args[0], dq)
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), page)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tEVENT\tTYPE\tSTATUS\tATTEMPTS\tCODE\tNEXT")
				for _, d := range page.Deliveries {
					code, next := "-", "-"
					if d.ResponseCode != nil {
						code = fmt.Sprint(*d.ResponseCode)
					} else if d.Error != nil {
						code = *d.Error
					}
					if d.NextAttemptAt != nil {
						next = *d.NextAttemptAt
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.EventID, d.EventType, d.Status, d.Attempts, code, next)
				}
				return tw.Flush()
			})
		},
	}
	deliveries.Flags().StringVar(&dq.Status, "status", "", "pending, delivering, succeeded, failed or paused")
	deliveries.Flags().IntVar(&dq.Limit, "limit", 50, "page size (1-100)")
	deliveries.Flags().IntVar(&dq.Offset, "offset", 0, "deliveries to skip")

	retry := &cobra.Command{
		Use:   "retry ID DELIVERY_ID",
		Short: "Send a delivery again (the server's worker sends it within a second)",
		Args:  cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, o orgRef) error {
				d, err := f.Events.Retry(c.Context(), o.ID, args[0], args[1])
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), d)
				}
				fmt.Fprintf(c.OutOrStdout(), "delivery %s of event %s queued again\n", d.ID, d.EventID)
				return nil
			})
		},
	}
	root.AddCommand(create, list, del, deliveries, retry)
	return []*cobra.Command{root}
}
