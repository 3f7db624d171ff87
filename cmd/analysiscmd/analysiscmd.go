// Package analysiscmd is the CLI of post-call analysis and agent tests:
// agentd test and agentd analyze, both clients of a running agentd (its
// own package keeps cmd under its size limit).
package analysiscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/app/agenttest"
	"github.com/agentd/agentd/app/analysis"
)

// apiClient calls a running agentd's v2-shaped routes ({data} / {error}).
type apiClient struct {
	base, key string
	http      *http.Client
}

func newAPIClient(server, key string) (*apiClient, error) {
	if server == "" {
		return nil, errors.New("--server is required (the running agentd, e.g. http://127.0.0.1:8080; env AGENTD_SERVER)")
	}
	if key == "" {
		return nil, errors.New("--server needs --api-key (or AGENTD_API_KEY)")
	}
	return &apiClient{base: strings.TrimRight(server, "/"), key: key, http: &http.Client{Timeout: 30 * time.Minute}}, nil
}

// do sends body (raw bytes) and decodes {data} into out.
func (a *apiClient) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("x-api-key", a.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("agentd at %s: %w", a.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		return fmt.Errorf("server answered %d: %s", resp.StatusCode, e.Error.Message)
	}
	var env struct{ Data json.RawMessage }
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("server answer: %w", err)
	}
	return json.Unmarshal(env.Data, out)
}

// readTestFile reads a test file, refusing one beyond
// agenttest.MaxFileBytes before reading it all (a named pipe or a huge
// file is never loaded whole).
func readTestFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, agenttest.MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > agenttest.MaxFileBytes {
		return nil, fmt.Errorf("%s: the test file is more than %d bytes (max %d)", path, agenttest.MaxFileBytes, agenttest.MaxFileBytes)
	}
	return b, nil
}

// envString is the environment variable's value, or def when unset.
func envString(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// Commands are agentd test and agentd analyze.
func Commands() []*cobra.Command {
	var server, key string
	serverFlags := func(c *cobra.Command) {
		c.Flags().StringVar(&server, "server", envString("AGENTD_SERVER", ""), "base URL of a running agentd, e.g. http://127.0.0.1:8080 (env AGENTD_SERVER)")
		c.Flags().StringVar(&key, "api-key", envString("AGENTD_API_KEY", ""), "API key for --server (env AGENTD_API_KEY)")
	}
	var agentID, junit string
	test := &cobra.Command{
		Use:   "test --agent ID FILE",
		Short: "Run a test file (YAML or JSON scenarios) against an agent; exit 1 when one fails",
		Long: `Runs each scenario of FILE through the running agentd's conversation engine
(POST /api/v1/agents/{id}/tests), prints a report and exits with status 1
when a scenario fails. --junit FILE also writes the report as JUnit XML.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if agentID == "" {
				return errors.New("--agent is required")
			}
			b, err := readTestFile(args[0])
			if err != nil {
				return err
			}
			if _, err := agenttest.Parse(b); err != nil { // a bad file fails before any call
				return fmt.Errorf("%s: %w", args[0], err)
			}
			api, err := newAPIClient(server, key)
			if err != nil {
				return err
			}
			var rep agenttest.Report
			if err := api.do(c.Context(), "POST", "/api/v1/agents/"+agentID+"/tests", b, &rep); err != nil {
				return err
			}
			fmt.Fprint(c.OutOrStdout(), agenttest.Text(rep))
			if junit != "" {
				x, err := agenttest.JUnit(rep)
				if err != nil {
					return err
				}
				if err := os.WriteFile(junit, x, 0o644); err != nil {
					return err
				}
			}
			if rep.Failed > 0 {
				return fmt.Errorf("%d of %d scenarios failed", rep.Failed, len(rep.Scenarios))
			}
			return nil
		},
	}
	serverFlags(test)
	test.Flags().StringVar(&agentID, "agent", "", "the agent's id")
	test.Flags().StringVar(&junit, "junit", "", "also write the report as JUnit XML to this file")

	var callIDs []string
	var batch, agent, status string
	var wait bool
	analyze := &cobra.Command{
		Use:   "analyze [--call ID]... [--batch ID] [--agent ID [--status S]]",
		Short: "Analyse calls again (after a change of the analysis plan), with progress",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			api, err := newAPIClient(server, key)
			if err != nil {
				return err
			}
			body, _ := json.Marshal(map[string]any{"callIds": callIDs, "batchId": batch, "agentId": agent, "status": status})
			var p analysis.Progress
			if err := api.do(c.Context(), "POST", "/api/v1/analyses", body, &p); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "%d calls queued for analysis\n", p.Queued)
			for wait && batch != "" {
				if err := api.do(c.Context(), "GET", "/api/v1/analyses?batchId="+batch, nil, &p); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "batch %s: %d pending, %d completed, %d failed, %d skipped of %d\n",
					batch, p.Pending, p.Completed, p.Failed, p.Skipped, p.Total)
				if p.Pending == 0 {
					break
				}
				select {
				case <-c.Context().Done():
					return c.Context().Err()
				case <-time.After(time.Second):
				}
			}
			return nil
		},
	}
	serverFlags(analyze)
	f := analyze.Flags()
	f.StringArrayVar(&callIDs, "call", nil, "a call to analyse again (repeatable)")
	f.StringVar(&batch, "batch", "", "analyse every call of this batch again")
	f.StringVar(&agent, "agent", "", "analyse this agent's calls again")
	f.StringVar(&status, "status", "", "with --agent: only calls of this status")
	f.BoolVar(&wait, "wait", false, "with --batch: print progress until no analysis is pending")
	return []*cobra.Command{test, analyze}
}
