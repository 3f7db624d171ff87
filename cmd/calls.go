package cmd

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/cmd/cliflags"
	"github.com/agentd/agentd/internal/errs"
)

// addCallFlags adds the dial queue and dialer flags of serve.
func addCallFlags(c *cobra.Command, cfg *calls.Config) {
	f := c.Flags()
	f.StringVar(&cfg.Dialer, "dialer", cliflags.String("AGENTD_DIALER", "none"), "telephony dialer: none, sim, sip or livekit (env AGENTD_DIALER)")
	f.Float64Var(&cfg.DialCPS, "dial-cps", cliflags.Float("AGENTD_DIAL_CPS", 1), "calls started per second, the trunk's budget, shared by every process on the database (env AGENTD_DIAL_CPS)")
	f.IntVar(&cfg.MaxConcurrent, "max-concurrent-calls", cliflags.Int("AGENTD_MAX_CONCURRENT_CALLS", 10), "outbound calls up at once on the trunk, shared by every process on the database (env AGENTD_MAX_CONCURRENT_CALLS)")
	simSecs := cliflags.Float("AGENTD_SIM_CALL_SECONDS", 3)
	f.Float64Var(&simSecs, "sim-call-seconds", simSecs, "sim dialer: talk time of an answered call in seconds (env AGENTD_SIM_CALL_SECONDS)")
	ringSecs := cliflags.Float("AGENTD_SIM_RING_SECONDS", 1)
	f.Float64Var(&ringSecs, "sim-ring-seconds", ringSecs, "sim dialer: how long a call rings before it is answered, 0 for not at all (env AGENTD_SIM_RING_SECONDS)")
	f.DurationVar(&cfg.Lease, "dial-lease", cliflags.Duration("AGENTD_DIAL_LEASE", 30*time.Second), "a dialling attempt whose process stopped renewing it for this long is settled as failed (interrupted) (env AGENTD_DIAL_LEASE)")
	f.DurationVar(&cfg.Drain, "dial-drain", cliflags.Duration("AGENTD_DIAL_DRAIN", 5*time.Second), "on shutdown, how long dialling calls may finish before they are hung up (env AGENTD_DIAL_DRAIN)")
	f.StringVar(&cfg.DialLog, "dial-log", cliflags.String("AGENTD_DIAL_LOG", ""), "append 'callID attempt unixMicros' to this file for every dial (audits and tests) (env AGENTD_DIAL_LOG)")
	f.MarkHidden("dial-log")
	addTelephonyFlags(c, &cfg.Telephony)
	prev := c.PreRunE
	c.PreRunE = func(c *cobra.Command, args []string) error {
		if simSecs <= 0 {
			return errors.New("--sim-call-seconds must be more than 0")
		}
		if ringSecs < 0 {
			return errors.New("--sim-ring-seconds must be 0 or more")
		}
		cfg.SimRing = time.Duration(ringSecs * float64(time.Second))
		if ringSecs == 0 {
			cfg.SimRing = -1 // the sim dialer's "no ring"
		}
		if cfg.DialCPS <= 0 {
			return errors.New("--dial-cps must be more than 0")
		}
		if cfg.MaxConcurrent < 1 {
			return errors.New("--max-concurrent-calls must be at least 1")
		}
		cfg.SimTalk = time.Duration(simSecs * float64(time.Second))
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// callCommands are the call commands (calls list|get|cancel).
func callCommands(g *globals) []*cobra.Command {
	root := &cobra.Command{Use: "calls", Short: "List, read and cancel calls"}
	var orgFlag string
	root.PersistentFlags().StringVar(&orgFlag, "org", "", "organization name or id (default: the only one)")

	var o calls.ListOptions
	var status, from, to string
	list := &cobra.Command{
		Use:   "list",
		Short: "List calls, newest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				if status != "" {
					o.Statuses = strings.Split(status, ",")
				}
				for _, p := range []struct {
					s   string
					dst **time.Time
				}{{from, &o.From}, {to, &o.To}} {
					if p.s != "" {
						t, err := time.Parse(time.RFC3339, p.s)
						if err != nil {
							return fmt.Errorf("--from/--to: %w", err)
						}
						*p.dst = &t
					}
				}
				page, err := f.Calls.List(c.Context(), org.ID, o)
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), page)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATUS\tPHONE\tAGENT\tPRIORITY\tATTEMPTS\tDUE/ENDED\tCREATED")
				for _, r := range page.Calls {
					when := callDeref(r.NextAttemptAt)
					if r.EndedAt != nil {
						when = *r.EndedAt
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.ID, r.Status, r.PhoneNumber, r.Agent.Name,
						r.Priority, r.Attempts, when, r.CreatedAt)
				}
				tw.Flush()
				fmt.Fprintf(c.OutOrStdout(), "%d of %d calls\n", len(page.Calls), page.Pagination.Total)
				return nil
			})
		},
	}
	lf := list.Flags()
	lf.StringVar(&status, "status", "", "only these statuses (comma-separated)")
	lf.StringVar(&o.AgentID, "agent", "", "only this agent's calls (id)")
	lf.StringVar(&o.PhoneNumber, "phone", "", "only calls to this number")
	lf.StringVar(&o.Direction, "direction", "", "inbound or outbound")
	lf.StringVar(&from, "from", "", "created at or after (RFC 3339)")
	lf.StringVar(&to, "to", "", "created at or before (RFC 3339)")
	lf.StringVar(&o.SortBy, "sort-by", "createdAt", "createdAt, scheduledAt or priority")
	lf.StringVar(&o.SortOrder, "sort-order", "desc", "asc or desc")
	lf.IntVar(&o.Limit, "limit", 50, "page size (1-100)")
	lf.IntVar(&o.Offset, "offset", 0, "calls to skip")

	get := &cobra.Command{
		Use:   "get ID",
		Short: "Show one call with its attempts",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				rec, err := f.Calls.Get(c.Context(), org.ID, args[0])
				if err != nil {
					return callCLIErr(err)
				}
				return printJSON(c.OutOrStdout(), rec)
			})
		},
	}
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a call that has not ended (a call being dialled is hung up by the server within a heartbeat)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				rec, prev, err := f.Calls.CancelCall(c.Context(), org.ID, args[0])
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), rec)
				}
				fmt.Fprintf(c.OutOrStdout(), "call %s cancelled (was %s)\n", rec.ID, prev)
				return nil
			})
		},
	}
	root.AddCommand(list, get, cancel)
	return []*cobra.Command{root}
}

// callCLIErr prints an app error's client message (not the wrapped cause).
func callCLIErr(err error) error {
	var e *errs.Error
	if errors.As(err, &e) && e.Kind != errs.Internal && e.Kind != errs.Unavailable {
		return errors.New(e.Message)
	}
	return err
}

func callDeref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
