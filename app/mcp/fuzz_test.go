package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// FuzzToolArguments feeds every tool arbitrary arguments as a client may
// send them: each answers (a result or a tool error, never a panic), in
// bounded time and size, and an error is never an internal one for input
// that is merely wrong.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{`{}`, `null`, ``, `[]`, `"x"`, `{"id":"agt_1"}`, `{"limit":"0"}`, `{"limit":1e99}`,
		`{"name":"A","type":"chat","tools":[{"type":"mcp","name":"crm","url":"https://x.example.com"}]}`,
		`{"collectionId":"c","query":"q","limit":-1}`, `{"agentId":"a","contactPhone":"+15555550100","scheduledAt":"yesterday"}`,
		`{"status":["a","b"],"offset":-3}`, `{"id":{"$gt":""}}`, `{"name":"\u0000"}`, `{"a":` + string(make([]byte, 64)) + `}`} {
		for i := range 15 {
			f.Add(uint8(i), []byte(seed))
		}
	}
	ctx := context.Background()
	db, org := storetest.WithOrg(f)
	set, err := features.Open(ctx, features.Config{DBPath: db.Path(), KB: kb.Config{EmbedDims: 64}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { set.Close() })
	s := &Server{d: Deps{Agents: set.Agents, Calls: set.Calls, KB: set.KB, Conversations: set.Conversations, Analysis: set.Analysis}}
	s.d.Log = discard()
	tools := s.tools()
	extra := &sdk.RequestExtra{TokenInfo: TokenInfo(Principal{KeyID: "k", OrgID: org, Role: "owner"})}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tl := tools[int(which)%len(tools)]
		h := s.handler(tl)
		start := time.Now()
		res, err := h(ctx, &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: tl.tool.Name, Arguments: json.RawMessage(args)}, Extra: extra})
		if err != nil {
			t.Fatalf("%s: protocol error %v", tl.tool.Name, err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s took %s", tl.tool.Name, time.Since(start))
		}
		if res.IsError {
			text := res.Content[0].(*sdk.TextContent).Text
			if text == "internal error" {
				t.Errorf("%s %q: internal error", tl.tool.Name, args)
			}
			if len(text) > 4096 {
				t.Errorf("%s: error of %d bytes", tl.tool.Name, len(text))
			}
		}
	})
}
