package cmd

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentd/agentd/app/dnc"
	"github.com/agentd/agentd/app/features"
)

// dncCommands are the do-not-call commands: dnc import FILE, add, remove, list.
func dncCommands(g *globals) []*cobra.Command {
	root := &cobra.Command{Use: "dnc", Short: "Manage the organization's do-not-call list"}
	var orgFlag string
	root.PersistentFlags().StringVar(&orgFlag, "org", "", "organization name or id (default: the only one)")

	var reason string
	var dryRun bool
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Add the numbers of a file (CSV or one per line) to the do-not-call list",
		Long: `Add every number of FILE to the organization's do-not-call list.

FILE holds one number per line, or is a CSV: a header naming a phone column (phone,
phoneNumber, phone_number, number, contactPhone) and optionally a reason column;
without such a header the first column is read. Numbers are cleaned like on every call
endpoint (spaces, dots, dashes, parentheses) and must then be E.164. Blank lines and
lines starting with # are skipped; invalid lines are reported and skipped.

Waiting calls to listed numbers fail at once (do_not_call). Progress is shown on a
terminal. Writes the database file (--db) directly; a running server sees the numbers
at once.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			start := time.Now()
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			lines, problems, err := dnc.Read(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			errOut := c.ErrOrStderr()
			if !g.json {
				for i, p := range problems {
					if i == maxPrintedProblems {
						fmt.Fprintf(errOut, "... and %d more invalid lines (see --json for all)\n", len(problems)-i)
						break
					}
					fmt.Fprintln(errOut, p.String())
				}
			}
			sum := dncImportSummary{File: args[0], Valid: len(lines), Invalid: len(problems), Problems: problems, DryRun: dryRun}
			if sum.Problems == nil {
				sum.Problems = []dnc.Problem{}
			}
			if !dryRun {
				err = inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
					bar := dncBar(errOut, len(lines), g.json)
					added, err := f.DNC.Import(c.Context(), org.ID, lines, reason, func(n int) { bar.Set(n) })
					bar.Finish()
					sum.Added, sum.AlreadyListed, sum.CallsFailed = added.Added, added.AlreadyListed, added.CallsFailed
					return err
				})
				if err != nil {
					return err
				}
			}
			sum.Seconds = time.Since(start).Seconds()
			if g.json {
				return printJSON(c.OutOrStdout(), sum)
			}
			if dryRun {
				fmt.Fprintf(c.OutOrStdout(), "%s: %d valid numbers, %d invalid lines (dry run: nothing written)\n", sum.File, sum.Valid, sum.Invalid)
				return nil
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: %d numbers added, %d already listed, %d invalid lines skipped; %d waiting calls failed; %.1fs\n",
				sum.File, sum.Added, sum.AlreadyListed, sum.Invalid, sum.CallsFailed, sum.Seconds)
			return nil
		},
	}
	imp.Flags().StringVar(&reason, "reason", "", "reason stored with numbers whose line gives none")
	imp.Flags().BoolVar(&dryRun, "dry-run", false, "read and check the file only; write nothing")

	var addReason string
	add := &cobra.Command{
		Use: "add NUMBER...", Short: "Add numbers to the do-not-call list", Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				req := dnc.AddRequest{Numbers: args}
				if addReason != "" {
					req.Reason = &addReason
				}
				out, err := f.DNC.Add(c.Context(), org.ID, req, time.Now().UTC())
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), out)
				}
				fmt.Fprintf(c.OutOrStdout(), "%d added, %d already listed, %d waiting calls failed\n", out.Added, out.AlreadyListed, out.CallsFailed)
				return nil
			})
		},
	}
	add.Flags().StringVar(&addReason, "reason", "", "why the numbers are listed")
	remove := &cobra.Command{
		Use: "remove NUMBER...", Short: "Remove numbers from the do-not-call list", Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				out, err := f.DNC.Remove(c.Context(), org.ID, dnc.RemoveRequest{Numbers: args})
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), out)
				}
				fmt.Fprintf(c.OutOrStdout(), "%d removed, %d were not listed\n", out.Removed, out.NotListed)
				return nil
			})
		},
	}
	var lo dnc.ListOptions
	list := &cobra.Command{
		Use: "list", Short: "List (or look up with --phone) numbers on the do-not-call list", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inOrg(c.Context(), g, orgFlag, func(f *features.Set, org orgRef) error {
				page, err := f.DNC.List(c.Context(), org.ID, lo)
				if err != nil {
					return callCLIErr(err)
				}
				if g.json {
					return printJSON(c.OutOrStdout(), page)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NUMBER\tREASON\tLISTED")
				for _, n := range page.Numbers {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", n.PhoneNumber, callDeref(n.Reason), n.CreatedAt)
				}
				tw.Flush()
				fmt.Fprintf(c.OutOrStdout(), "%d of %d numbers\n", len(page.Numbers), page.Pagination.Total)
				return nil
			})
		},
	}
	list.Flags().StringVar(&lo.PhoneNumber, "phone", "", "look this number up")
	list.Flags().IntVar(&lo.Limit, "limit", 50, "page size (1-1000)")
	list.Flags().IntVar(&lo.Offset, "offset", 0, "numbers to skip")
	root.AddCommand(imp, add, remove, list)
	return []*cobra.Command{root}
}

// dncImportSummary is the report of agentd dnc import.
type dncImportSummary struct {
	File          string        `json:"file"`
	DryRun        bool          `json:"dryRun"`
	Valid         int           `json:"valid"`
	Invalid       int           `json:"invalid"`
	Added         int           `json:"added"`
	AlreadyListed int           `json:"alreadyListed"`
	CallsFailed   int           `json:"callsFailed"`
	Problems      []dnc.Problem `json:"problems"`
	Seconds       float64       `json:"seconds"`
}

// dncBar is a progress bar of n numbers on a terminal, silent otherwise.
func dncBar(w interface{ Write([]byte) (int, error) }, n int, quiet bool) *progressbar.ProgressBar {
	visible := false
	if f, ok := w.(*os.File); ok && !quiet {
		visible = term.IsTerminal(int(f.Fd()))
	}
	bar := progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetVisibility(visible),
		progressbar.OptionSetDescription("do-not-call"), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("numbers"), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
	bar.StartWithoutRender()
	return bar
}
