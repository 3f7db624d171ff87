package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/calls"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/settings"
)

// batchCommands are the campaign commands: batch list|get|pause|resume|cancel.
// They work on the database file; a running server sees the change at its
// next poll (pause, resume) and hangs up cancelled calls within a heartbeat.
func batchCommands(g *globals) []*cobra.Command {
	root := &cobra.Command{Use: "batch", Short: "List, read, pause, resume and cancel call batches (campaigns)"}
	var orgFlag string
	root.PersistentFlags().StringVar(&orgFlag, "org", "", "organization name or id (default: the only one)")

	var o calls.BatchListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List batches, newest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				page, err := f.Calls.ListBatches(c.Context(), org.ID, o)
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), page)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tAGENT\tCALLS\tDONE\tANSWER RATE\tNEXT DUE\tCREATED")
				for _, b := range page.Batches {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", b.ID, dash(b.Name), b.Status, b.Agent.Name, b.Total,
						finished(b.Counts), rate(b.AnswerRate), callDeref(b.NextDueAt), b.CreatedAt)
				}
				tw.Flush()
				fmt.Fprintf(c.OutOrStdout(), "%d of %d batches\n", len(page.Batches), page.Pagination.Total)
				return nil
			})
		},
	}
	lf := list.Flags()
	lf.StringVar(&o.AgentID, "agent", "", "only this agent's batches (id)")
	lf.StringVar(&o.Status, "status", "", "running, paused, completed or cancelled")
	lf.IntVar(&o.Limit, "limit", 50, "page size (1-100)")
	lf.IntVar(&o.Offset, "offset", 0, "batches to skip")

	one := func(use, short string, act func(c *cobra.Command, f *features.Set, org orgRef, id string) (calls.BatchView, string, error)) *cobra.Command {
		return &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
					b, msg, err := act(c, f, org, args[0])
					if err != nil {
						return callCLIErr(err)
					}
					if g.json {
						return printJSON(c.OutOrStdout(), b)
					}
					printBatch(c.OutOrStdout(), b)
					if msg != "" {
						fmt.Fprintln(c.OutOrStdout(), msg)
					}
					return nil
				})
			},
		}
	}
	get := one("get", "Show a batch with the counts of its calls", func(c *cobra.Command, f *features.Set, org orgRef, id string) (calls.BatchView, string, error) {
		b, err := f.Calls.GetBatch(c.Context(), org.ID, id)
		return b, "", err
	})
	pause := one("pause", "Pause a batch: no new dials; calls in progress finish", func(c *cobra.Command, f *features.Set, org orgRef, id string) (calls.BatchView, string, error) {
		b, err := f.Calls.PauseBatchAt(c.Context(), org.ID, id, time.Now().UTC())
		return b, "batch paused", err
	})
	resume := one("resume", "Resume a paused batch", func(c *cobra.Command, f *features.Set, org orgRef, id string) (calls.BatchView, string, error) {
		b, err := f.Calls.ResumeBatchAt(c.Context(), org.ID, id, time.Now().UTC())
		return b, "batch resumed (a running server dials its due calls at its next poll)", err
	})
	cancel := one("cancel", "Cancel every call of a batch that is not final (calls being dialled are hung up by the server within a heartbeat)", func(c *cobra.Command, f *features.Set, org orgRef, id string) (calls.BatchView, string, error) {
		b, n, live, err := f.Calls.CancelBatchAt(c.Context(), org.ID, id, time.Now().UTC())
		return b, fmt.Sprintf("batch cancelled: %d calls cancelled (%d being dialled are hung up by the server)", n, len(live)), err
	})
	root.AddCommand(list, get, pause, resume, cancel)
	return []*cobra.Command{root}
}

func printBatch(w io.Writer, b calls.BatchView) {
	c := b.Counts
	fmt.Fprintf(w, "batch %s %q: %s, agent %s, created %s\n", b.ID, b.Name, b.Status, b.Agent.Name, b.CreatedAt)
	fmt.Fprintf(w, "  %d calls: %d waiting, %d live, %d completed, %d no answer, %d busy, %d failed, %d cancelled\n",
		b.Total, c.Initiated+c.Scheduled+c.Queued, c.Connecting+c.Ringing+c.Active, c.Completed, c.NoAnswer, c.Busy, c.Failed, c.Cancelled)
	fmt.Fprintf(w, "  %d attempts, answer rate %s, next due %s\n", b.Attempts, rate(b.AnswerRate), callDeref(b.NextDueAt))
}

func finished(c calls.CallCounts) int {
	return c.Completed + c.Failed + c.Cancelled + c.NoAnswer + c.Busy
}

func rate(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r*100, 'f', 1, 64) + "%"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// settingsCommands are the organization settings commands: settings show,
// settings calling-hours.
func settingsCommands(g *globals) []*cobra.Command {
	root := &cobra.Command{Use: "settings", Short: "Show and change the organization's settings (calling hours)"}
	var orgFlag string
	root.PersistentFlags().StringVar(&orgFlag, "org", "", "organization name or id (default: the only one)")
	show := &cobra.Command{
		Use: "show", Short: "Show the organization's settings", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				s, err := f.Settings.Get(c.Context(), org.ID)
				if err != nil {
					return callCLIErr(err)
				}
				return printSettings(c.OutOrStdout(), g, s)
			})
		},
	}
	var enable, disable bool
	var start, end, days, tz string
	hours := &cobra.Command{
		Use:   "calling-hours",
		Short: "Turn calling hours on or off and set them",
		Long: `Calling hours (the TCPA rule by default: 08:00 to 21:00 in the recipient's local
time) move scheduled, batched and retried calls to the next allowed moment and refuse
immediate calls outside them. They are off until turned on:

  agentd settings calling-hours --enable
  agentd settings calling-hours --start 09:00 --end 20:00 --days 1,2,3,4,5 --timezone America/Chicago`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if enable && disable {
				return fmt.Errorf("--enable and --disable: say one")
			}
			p := settings.HoursPatch{}
			f := c.Flags()
			switch {
			case enable:
				p.Enabled = &enable
			case disable:
				off := false
				p.Enabled = &off
			}
			if f.Changed("start") {
				p.Start = &start
			}
			if f.Changed("end") {
				p.End = &end
			}
			if f.Changed("timezone") {
				p.DefaultTimezone = &tz
			}
			if f.Changed("days") {
				ds, err := parseDays(days)
				if err != nil {
					return err
				}
				p.Days = &ds
			}
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				s, err := f.Settings.Update(c.Context(), org.ID, settings.Patch{CallingHours: &p}, time.Now().UTC())
				if err != nil {
					return callCLIErr(err)
				}
				return printSettings(c.OutOrStdout(), g, s)
			})
		},
	}
	hf := hours.Flags()
	hf.BoolVar(&enable, "enable", false, "turn calling hours on")
	hf.BoolVar(&disable, "disable", false, "turn calling hours off")
	hf.StringVar(&start, "start", "08:00", "first allowed local time (HH:mm)")
	hf.StringVar(&end, "end", "21:00", "end of the allowed local time (HH:mm, exclusive)")
	hf.StringVar(&days, "days", "0,1,2,3,4,5,6", "allowed days, 0 (Sunday) to 6 (Saturday), comma-separated")
	hf.StringVar(&tz, "timezone", "UTC", "zone of a recipient whose call, metadata and number name none (IANA)")
	root.AddCommand(show, hours)
	return []*cobra.Command{root}
}

func parseDays(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		d, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("--days: %q is not a day number (0 Sunday to 6 Saturday)", p)
		}
		out = append(out, d)
	}
	return out, nil
}

func printSettings(w io.Writer, g *globals, s settings.Settings) error {
	if g.json {
		return printJSON(w, s)
	}
	h := s.CallingHours
	state := "off"
	if h.Enabled {
		state = "on"
	}
	days := make([]string, len(h.Days))
	for i, d := range h.Days {
		days[i] = strconv.Itoa(d)
	}
	fmt.Fprintf(w, "calling hours: %s, %s-%s on days %s, default zone %s\n", state, h.Start, h.End, strings.Join(days, ","), h.DefaultTimezone)
	return nil
}
