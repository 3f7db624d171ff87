package api

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// nodeScript runs a script of a pinned npm project under test/ against
// the server and returns its output. Without node or the project's
// node_modules the test is skipped, except under CI=true, where it fails.
func nodeScript(t *testing.T, project, probe, script string, env ...string) []byte {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI must run it: .ci/run installs node and runs npm ci in test/%s)", why, project)
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "test", project))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", probe)); err != nil {
		missing("test/" + project + "/node_modules is missing: run npm ci there")
	}
	cmd := exec.Command(node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("node %s timed out: %s", script, out)
	}
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	return out
}

type sdkUsage struct {
	Input  int `json:"inputTokens"`
	Output int `json:"outputTokens"`
}

type sdkRun struct {
	Generate struct {
		Text  string
		Usage sdkUsage
	}
	Stream struct {
		Text  string
		Usage sdkUsage
	}
	StreamError string
	Tools       struct {
		Text  string
		Steps int
		Calls []struct {
			Name  string
			Input map[string]any
		}
		Results []map[string]any
	}
	FollowUp struct{ Text string }
}

type lcUsage struct {
	Input  int `json:"input_tokens"`
	Output int `json:"output_tokens"`
}

type lcRun struct {
	Invoke struct {
		Text  string
		Usage lcUsage
	}
	Stream struct {
		Text  string
		Usage lcUsage
	}
	BindTools struct {
		Calls []struct {
			Name string
			Args map[string]any
		}
		Text string
	}
}

// The Vercel AI SDK (its default Responses model, .chat() and
// openai-compatible) and LangChain's ChatOpenAI (chat completions and
// useResponsesApi) against agentd and the scripted model, which sends no
// usage: text, streaming, a caller tool round trip, and usage counted by
// agentd in every answer.
func TestOpenAIClientsNode(t *testing.T) {
	e := newConvEnv(t, true, nil)
	e.model.Answer(func(r llmtest.Request) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				return llmtest.Reply{Content: "It is sunny in Lisbon.", NoUsage: true}
			}
		}
		if slicesContains(r.ToolNames(), "get_weather") {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Lisbon"}`}}, NoUsage: true}
		}
		if strings.Contains(r.All(), "on Sundays?") && strings.Contains(r.All(), "We open at seven.") {
			return llmtest.Reply{Content: "Closed on Sundays.", NoUsage: true}
		}
		return llmtest.Reply{Content: "We open at seven.", NoUsage: true}
	})
	out := nodeScript(t, "ai-node", "ai", "client.mjs",
		"AGENTD_BASE_URL="+e.url+"/api/v1/openai", "AGENTD_KEY="+e.key, "AGENTD_AGENT="+e.agentID)
	var got struct {
		Responses, Chat, Compatible   sdkRun
		Langchain, LangchainResponses lcRun
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	for name, r := range map[string]sdkRun{"openai(agent) (Responses API)": got.Responses, "openai.chat(agent)": got.Chat, "openai-compatible": got.Compatible} {
		if r.Generate.Text != "We open at seven." || r.Generate.Usage.Input == 0 || r.Generate.Usage.Output == 0 {
			t.Errorf("%s generateText: %+v", name, r.Generate)
		}
		if r.Stream.Text != "We open at seven." || r.Stream.Usage.Input == 0 || r.Stream.Usage.Output == 0 || r.StreamError != "" {
			t.Errorf("%s streamText: %+v %s", name, r.Stream, r.StreamError)
		}
		if r.Tools.Text != "It is sunny in Lisbon." || r.Tools.Steps != 2 || len(r.Tools.Calls) != 1 || r.Tools.Calls[0].Name != "get_weather" ||
			r.Tools.Calls[0].Input["city"] != "Lisbon" || len(r.Tools.Results) != 1 || r.Tools.Results[0]["sky"] != "sunny" {
			t.Errorf("%s tool round trip: %+v", name, r.Tools)
		}
		if r.FollowUp.Text != "Closed on Sundays." {
			t.Errorf("%s second turn: %+v", name, r.FollowUp)
		}
	}
	for name, r := range map[string]lcRun{"ChatOpenAI": got.Langchain, "ChatOpenAI useResponsesApi": got.LangchainResponses} {
		if r.Invoke.Text != "We open at seven." || r.Invoke.Usage.Input == 0 || r.Invoke.Usage.Output == 0 {
			t.Errorf("%s invoke: %+v", name, r.Invoke)
		}
		if r.Stream.Text != "We open at seven." || r.Stream.Usage.Input == 0 || r.Stream.Usage.Output == 0 {
			t.Errorf("%s stream: %+v", name, r.Stream)
		}
		if len(r.BindTools.Calls) != 1 || r.BindTools.Calls[0].Name != "get_weather" || r.BindTools.Calls[0].Args["city"] != "Lisbon" ||
			r.BindTools.Text != "It is sunny in Lisbon." {
			t.Errorf("%s bindTools: %+v", name, r.BindTools)
		}
	}
	if t.Failed() {
		t.Logf("node output: %s", out)
	}
}
