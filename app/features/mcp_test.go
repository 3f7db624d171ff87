package features_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/app/agents"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/app/kb"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
)

// agentd doctor's MCP probe names the agent and the server that did not
// answer, never its header.
func TestProbeMCP(t *testing.T) {
	ctx := context.Background()
	path := dbtest.Path(t, "agentd.db")
	db := storetest.Open(t, path)
	org := storetest.Org(t, db)
	f, err := features.Open(ctx, features.Config{DBPath: db.Path(), KB: kb.Config{EmbedDims: 64}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name, typ := "Orders", "chat"
	if _, err := f.Agents.Create(ctx, org, agents.Input{Name: &name, Type: &typ,
		Tools: json.RawMessage(`[{"type":"mcp","name":"gone","url":"http://127.0.0.1:1/mcp","headers":{"X-Key":"hidden-value"}}]`)}); err != nil {
		t.Fatal(err)
	}
	ok, failed, err := features.ProbeMCP(path, true, 2*time.Second)(ctx)
	if err != nil || ok != 0 || len(failed) != 1 || !strings.HasPrefix(failed[0], "agent Orders: gone:") || strings.Contains(failed[0], "hidden-value") {
		t.Errorf("probe: %d %q %v", ok, failed, err)
	}
}
