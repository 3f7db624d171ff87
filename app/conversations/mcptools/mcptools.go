// Package mcptools is the conversation engine's MCP client (issue 38): an
// agent's {type: "mcp"} tools entry names a server whose tools the model
// may call. It connects over streamable HTTP (falling back to the older
// SSE transport) through the forgery guard, lists the server's tools when
// a conversation or call needs them (kept TTL, refreshed at once on the
// server's list-changed notification), and calls them within a timeout
// and an answer bound.
package mcptools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/safehttp"
)

// Defaults.
const (
	DefaultTTL     = 60 * time.Second
	DefaultTimeout = 10 * time.Second
	// MaxAnswer bounds a tool's result text, as for url tools (64 KB).
	MaxAnswer = 64 << 10
	// MaxTools is how many tools of one server are offered.
	MaxTools = 64
	// maxMessage bounds one protocol message (a tool list, a result).
	maxMessage = 1 << 20
	// maxConns bounds the open sessions kept.
	maxConns = 256
)

// Server is one MCP entry of an agent's tools.
type Server struct {
	Name         string
	URL          string
	Headers      map[string]string // secrets: never logged
	AllowedTools []string          // empty: every tool
}

// Tool is one tool of a server as the model is offered it.
type Tool struct {
	Function    string // the function name the model calls
	Server      Server
	Name        string // the tool's own name on the server
	Description string
	Parameters  json.RawMessage
}

// Options configure a Client.
type Options struct {
	Guard   *safehttp.Client
	TTL     time.Duration
	Timeout time.Duration
	Log     *slog.Logger
}

// Client keeps the sessions and tool lists of the servers in use; it is
// safe for concurrent use. Close ends every session.
type Client struct {
	o     Options
	mu    sync.Mutex
	conns map[string]*conn
}

// New builds a Client.
func New(o Options) *Client {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Guard == nil {
		o.Guard = safehttp.New(safehttp.Options{})
	}
	return &Client{o: o, conns: map[string]*conn{}}
}

// conn is one server's session and its last tool list.
type conn struct {
	mu       sync.Mutex // held while connecting or listing
	session  *sdk.ClientSession
	cancel   context.CancelFunc
	tools    []*sdk.Tool
	listedAt time.Time
	used     time.Time
	stale    atomic.Bool // the server said its list changed
}

// key identifies a server by where it is and how it is called.
func key(s Server) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", s.URL)
	ks := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Fprintf(h, "%s\x00%s\x00", k, s.Headers[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// conn is the server's entry, made on first use; idle entries past the
// TTL (and the oldest beyond maxConns) are closed.
func (c *Client) conn(s Server) *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	k := key(s)
	for ck, x := range c.conns {
		if ck != k && now.Sub(x.lastUsed()) > 2*c.o.TTL {
			delete(c.conns, ck)
			go x.close()
		}
	}
	x := c.conns[k]
	if x == nil {
		if len(c.conns) >= maxConns {
			var oldest string
			for ck, y := range c.conns {
				if oldest == "" || y.lastUsed().Before(c.conns[oldest].lastUsed()) {
					oldest = ck
				}
			}
			go c.conns[oldest].close()
			delete(c.conns, oldest)
		}
		x = &conn{used: now}
		c.conns[k] = x
	}
	return x
}

func (x *conn) lastUsed() time.Time {
	if x.mu.TryLock() {
		defer x.mu.Unlock()
		return x.used
	}
	return time.Now() // in use
}

func (x *conn) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drop()
}

// drop ends the session (x.mu held).
func (x *conn) drop() {
	if x.session != nil {
		x.session.Close()
		x.session = nil
	}
	if x.cancel != nil {
		x.cancel()
		x.cancel = nil
	}
	x.tools = nil
}

// Close ends every session.
func (c *Client) Close() {
	c.mu.Lock()
	all := c.conns
	c.conns = map[string]*conn{}
	c.mu.Unlock()
	for _, x := range all {
		x.close()
	}
}

// ErrUnreachable wraps a failure to connect to or list a server.
var ErrUnreachable = errors.New("MCP server unreachable")

// connect opens a session: streamable HTTP first, then SSE (x.mu held).
// The session outlives ctx (it is kept for the TTL) but not the timeout.
func (c *Client) connect(ctx context.Context, s Server, x *conn) error {
	if x.session != nil {
		return nil
	}
	hc := c.o.Guard.HTTPClient(s.Headers, maxMessage)
	client := sdk.NewClient(&sdk.Implementation{Name: "agentd", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			x.stale.Store(true) // no lock: it may come while a list holds x.mu
		},
	})
	var firstErr error
	for _, t := range []sdk.Transport{
		&sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1, MaxEventSize: maxMessage},
		&sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxEventSize: maxMessage},
	} {
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		timer := time.AfterFunc(c.o.Timeout, cancel)
		done := make(chan struct{})
		go func() { // the caller's end also ends a connect in progress
			select {
			case <-ctx.Done():
				cancel()
			case <-done:
			}
		}()
		cs, err := client.Connect(sctx, t, nil)
		close(done)
		if err == nil && timer.Stop() {
			x.session, x.cancel = cs, cancel
			return nil
		}
		if cs != nil {
			cs.Close()
		}
		cancel()
		if err == nil {
			err = context.DeadlineExceeded
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil || errors.Is(err, safehttp.ErrForbiddenAddress) {
			break
		}
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, clean(firstErr, s))
}

// clean is err without the server's URL or headers (they may hold
// credentials).
func clean(err error, s Server) string {
	msg := err.Error()
	if errors.Is(err, safehttp.ErrForbiddenAddress) {
		return "address not allowed"
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return "no answer in time"
	}
	msg = strings.ReplaceAll(msg, s.URL, "<url>")
	for _, v := range s.Headers {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, "<secret>")
		}
	}
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return msg
}

var nameRE = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// Function is the name a server's tool is offered under: mcp_<server>_<tool>
// in the function-name rules (a-z, 0-9, _ and -, at most 64). A name taken
// by another tool, or cut to fit, ends with a hash of both names instead.
func Function(server, tool string, taken func(string) bool) string {
	s := nameRE.ReplaceAllString("mcp_"+strings.TrimSpace(server)+"_"+strings.TrimSpace(tool), "_")
	if len(s) <= 64 && (taken == nil || !taken(s)) {
		return s
	}
	h := sha256.Sum256([]byte(server + "\x00" + tool))
	return s[:min(len(s), 55)] + "_" + hex.EncodeToString(h[:4])
}

// Tools are the server's tools (within AllowedTools), listed at most TTL
// ago unless the server said its list changed.
func (c *Client) Tools(ctx context.Context, s Server) ([]*sdk.Tool, error) {
	x := c.conn(s)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.used = time.Now()
	if x.session != nil && !x.stale.Load() && time.Since(x.listedAt) < c.o.TTL {
		return allowed(x.tools, s.AllowedTools), nil
	}
	x.stale.Store(false)
	ts, err := c.list(ctx, s, x)
	if err != nil && x.session != nil {
		// The kept session may have ended on the server's side: once more
		// on a fresh one.
		x.drop()
		ts, err = c.list(ctx, s, x)
	}
	if err != nil {
		x.drop()
		return nil, err
	}
	x.tools, x.listedAt = ts, time.Now()
	return allowed(ts, s.AllowedTools), nil
}

// list connects if need be and lists every page of tools (x.mu held).
func (c *Client) list(ctx context.Context, s Server, x *conn) ([]*sdk.Tool, error) {
	if err := c.connect(ctx, s, x); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var ts []*sdk.Tool
	for t, err := range x.session.Tools(lctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("%w: listing tools: %s", ErrUnreachable, clean(err, s))
		}
		if len(ts) < 1000 { // read on, keep a bounded list
			ts = append(ts, t)
		}
	}
	return ts, nil
}

// allowed is the tools the agent allows, at most MaxTools.
func allowed(ts []*sdk.Tool, names []string) []*sdk.Tool {
	out := make([]*sdk.Tool, 0, min(len(ts), MaxTools))
	for _, t := range ts {
		if len(out) == MaxTools {
			break
		}
		if len(names) == 0 || slices.Contains(names, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// Parameters is a tool's input schema for the model: an object schema.
func Parameters(t *sdk.Tool) json.RawMessage {
	b, err := json.Marshal(t.InputSchema)
	if err != nil || len(b) > 16<<10 || !strings.HasPrefix(string(b), "{") {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}
