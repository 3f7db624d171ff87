package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/app/listings"
	"github.com/agentd/agentd/internal/errs"
)

// syncClient posts listing syncs to a running agentd, retrying rate limits
// (429) and server errors (5xx) with exponential backoff.
type syncClient struct {
	base     string
	key      string
	http     *http.Client
	attempts int           // tries per request
	wait     time.Duration // first backoff; doubles up to maxWait
	maxWait  time.Duration
}

func newSyncClient(base, key string, wait time.Duration) *syncClient {
	return &syncClient{
		base: strings.TrimRight(base, "/"), key: key,
		http:     &http.Client{Timeout: 6 * time.Minute}, // a sync may take 5 minutes
		attempts: 6, wait: wait, maxWait: 60 * time.Second,
	}
}

// syncResponse is the body of a successful POST /api/v1/listings/sync.
type syncResponse struct {
	Data struct {
		Deleted int `json:"deleted"`
		Results struct {
			Imported  []listings.SyncItem `json:"imported"`
			Updated   []listings.SyncItem `json:"updated"`
			Unchanged []listings.SyncItem `json:"unchanged"`
			Failed    []listings.SyncItem `json:"failed"`
		} `json:"results"`
	} `json:"data"`
}

// apiError is an error body of the listings family.
type apiError struct {
	Status  int
	Message string
	Details []errs.FieldError
}

func (e *apiError) Error() string {
	return fmt.Sprintf("server answered %d: %s", e.Status, e.Message)
}

// sync sends one chunk and returns the server's report.
func (c *syncClient) sync(ctx context.Context, items []listings.Input, deleteStale bool) (listings.SyncReport, error) {
	body, err := json.Marshal(map[string]any{"listings": items, "deleteStale": deleteStale})
	if err != nil {
		return listings.SyncReport{}, err
	}
	wait := c.wait
	for attempt := 1; ; attempt++ {
		status, hdr, resp, err := c.post(ctx, "/api/v1/listings/sync", body)
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		if !retry {
			if status != http.StatusOK {
				return listings.SyncReport{}, decodeAPIError(status, resp)
			}
			var out syncResponse
			if err := json.Unmarshal(resp, &out); err != nil {
				return listings.SyncReport{}, fmt.Errorf("unreadable answer from the server: %w", err)
			}
			r := out.Data.Results
			return listings.SyncReport{Imported: r.Imported, Updated: r.Updated, Unchanged: r.Unchanged,
				Failed: r.Failed, Deleted: out.Data.Deleted}, nil
		}
		if attempt >= c.attempts {
			if err != nil {
				return listings.SyncReport{}, fmt.Errorf("giving up after %d attempts: %w", attempt, err)
			}
			return listings.SyncReport{}, fmt.Errorf("giving up after %d attempts: %w", attempt, decodeAPIError(status, resp))
		}
		d := wait
		if s, perr := strconv.Atoi(hdr.Get("Retry-After")); perr == nil && s > 0 && status == http.StatusTooManyRequests {
			d = max(d, time.Duration(s)*time.Second)
		}
		d = min(d, c.maxWait)
		select {
		case <-ctx.Done():
			return listings.SyncReport{}, ctx.Err()
		case <-time.After(d):
		}
		wait = min(2*wait, c.maxWait)
	}
}

func (c *syncClient) post(ctx context.Context, path string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

func decodeAPIError(status int, body []byte) *apiError {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Details []errs.FieldError `json:"details"`
	}
	out := &apiError{Status: status, Message: http.StatusText(status)}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		out.Message, out.Details = e.Error.Message, e.Details
	}
	return out
}
