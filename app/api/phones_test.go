package api

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A phone number belongs to one organization at a time (issue 27): B's
// claim of A's number, by create or by update, is a 409 that changes
// nothing; inbound routing never reaches B; once A's agent is deleted the
// number is free for B.
func TestPhoneNumberBelongsToOneOrganization(t *testing.T) {
	e := newTestEnv(t)
	_, keyB := e.newOrg("bee")
	a := mustCreateAgent(t, e, e.key, map[string]any{"name": "desk", "type": "voice", "phoneNumbers": []string{"+14155550100"}})
	code, _, b := e.do("POST", "/api/v1/agents", keyB, map[string]any{"name": "thief", "type": "voice", "phoneNumbers": []string{"+1 415 555 0100"}})
	if code != 409 || !strings.Contains(string(b), "+14155550100") {
		t.Fatalf("B claims A's number: %d %s, want 409", code, b)
	}
	if l := listAgents(t, e, keyB, ""); len(l.Data.Agents) != 0 {
		t.Fatalf("the refused create stored an agent: %+v", l.Data.Agents)
	}
	other := mustCreateAgent(t, e, keyB, map[string]any{"name": "other", "type": "voice", "phoneNumbers": []string{"+14155550199"}})
	if code, _, b := e.do("PATCH", "/api/v1/agents/"+other.ID, keyB, map[string]any{"phoneNumbers": []string{"+14155550199", "+14155550100"}}); code != 409 {
		t.Fatalf("B adds A's number by update: %d %s", code, b)
	}
	ctx := context.Background()
	got, err := e.db.Agents.VoiceAgentForNumber(ctx, "+14155550100")
	if err != nil || got.ID != a.ID {
		t.Fatalf("inbound to A's number: %+v %v", got, err)
	}
	// A second agent of A may share the number.
	mustCreateAgent(t, e, e.key, map[string]any{"name": "desk 2", "type": "voice", "phoneNumbers": []string{"+14155550100"}})
	// Deleting A's agents frees the number.
	for _, ag := range listAgents(t, e, e.key, "").Data.Agents {
		e.do("DELETE", "/api/v1/agents/"+ag["id"].(string), e.key, nil)
	}
	if _, err := e.db.Agents.VoiceAgentForNumber(ctx, "+14155550100"); err == nil {
		t.Fatal("a number with no active agent still routes")
	}
	mine := mustCreateAgent(t, e, keyB, map[string]any{"name": "new owner", "type": "voice", "phoneNumbers": []string{"+14155550100"}})
	if got, err := e.db.Agents.VoiceAgentForNumber(ctx, "+14155550100"); err != nil || got.ID != mine.ID {
		t.Fatalf("inbound after the transfer: %+v %v", got, err)
	}
}

// Two organizations claiming one number at once: exactly one wins.
func TestPhoneNumberParallelClaims(t *testing.T) {
	e := newTestEnv(t)
	keys := []string{e.key}
	for _, n := range []string{"b", "c", "d", "f"} {
		_, k := e.newOrg("org-" + n)
		keys = append(keys, k)
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := e.do("POST", "/api/v1/agents", k, map[string]any{"name": "x", "type": "voice", "phoneNumbers": []string{"+14155550123"}})
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[201] != 1 || codes[409] != len(keys)-1 {
		t.Fatalf("parallel claims: %v, want one 201", codes)
	}
}
