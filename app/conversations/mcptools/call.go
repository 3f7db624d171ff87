package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what a tool answered: its text for the model, and whether the
// tool reported an error.
type Result struct {
	Text    string
	IsError bool
}

// ErrTooLarge is a result past MaxAnswer.
var ErrTooLarge = errors.New("the tool answered more than 64 KB")

// ErrTimeout is a call with no answer within the timeout.
var ErrTimeout = errors.New("the tool did not answer in time")

// Call calls the server's tool with args within the timeout.
func (c *Client) Call(ctx context.Context, s Server, tool string, args map[string]any) (Result, error) {
	x := c.conn(s)
	x.mu.Lock()
	x.used = time.Now()
	if err := c.connect(ctx, s, x); err != nil {
		x.drop()
		x.mu.Unlock()
		return Result{}, err
	}
	cs := x.session
	x.mu.Unlock() // calls run in parallel on one session
	cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err != nil && ctx.Err() != nil:
		return Result{}, ctx.Err()
	case err != nil && cctx.Err() != nil:
		return Result{}, ErrTimeout
	case err != nil:
		// The session may be gone: the next use reconnects.
		x.mu.Lock()
		if x.session == cs {
			x.drop()
		}
		x.mu.Unlock()
		return Result{}, fmt.Errorf("%w: %s", ErrUnreachable, clean(err, s))
	}
	text, err := Text(res)
	return Result{Text: text, IsError: res.IsError}, err
}

// Text is a result as the model reads it: its text contents, or its
// structured content as JSON; other content is named, not inlined.
func Text(res *sdk.CallToolResult) (string, error) {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch v := c.(type) {
		case *sdk.TextContent:
			b.WriteString(v.Text)
		case *sdk.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				b.WriteString(v.Resource.Text)
			} else {
				b.WriteString("[resource omitted]")
			}
		case *sdk.ImageContent:
			b.WriteString("[image omitted]")
		case *sdk.AudioContent:
			b.WriteString("[audio omitted]")
		case *sdk.ResourceLink:
			b.WriteString("[resource link: " + v.URI + "]")
		}
		if b.Len() > MaxAnswer {
			return "", ErrTooLarge
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		j, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", err
		}
		b.Write(j)
	}
	if b.Len() > MaxAnswer {
		return "", ErrTooLarge
	}
	if b.Len() == 0 {
		return `{"ok":true}`, nil
	}
	return b.String(), nil
}
