package web

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agentd/agentd/app/agents"
)

// Saving an agent's form unchanged reads back the same agent: every config
// key set, of either type, survives "Save agent" (issue 26: the form used to
// drop callerIdRotation and maxConcurrentCalls, which it did not show).
func TestAgentFormRoundTripKeepsEveryConfigKey(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	ctx := context.Background()
	for _, c := range []struct{ typ, cfg string }{
		{"voice", `{"callerIdRotation":true,"interruptionThreshold":0.4,"maxConcurrentCalls":5,"speed":1.1,"voice":"alloy"}`},
		{"voice", `{"callerIdRotation":false,"maxConcurrentCalls":1}`},
		{"voice", `{}`},
		{"chat", `{"allowedDomains":["*.shop.example","example.com"],"greeting":"Hi!","maxMessagesPerDay":500,"placeholder":"Ask","position":"top-left","primaryColor":"#112233","theme":"dark"}`},
	} {
		name, typ, status, model, instr := "Ava "+c.typ, c.typ, "active", "gpt-4o-mini", "Be brief."
		phones := []string{"+15550001111"}
		if typ == "chat" {
			phones = []string{}
		}
		a, err := e.site.f.Agents.Create(ctx, owner.orgID, agents.Input{Name: &name, Type: &typ, Status: &status, Model: &model,
			Instructions: &instr, PhoneNumbers: &phones, Config: json.RawMessage(c.cfg),
			Tools: json.RawMessage(`[{"id":"t1","name":"lookup","description":"finds an order"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		_, page, _ := e.get(owner, "/agents/"+a.ID)
		form := formValues(t, page, "/agents/"+a.ID)
		if code, body, _ := e.post(owner, "/agents/"+a.ID, form); code != http.StatusSeeOther {
			t.Fatalf("save %s: %d %.500s", c.cfg, code, body)
		}
		b, _ := e.site.f.Agents.Get(ctx, owner.orgID, a.ID)
		if !jsonEqual(b.Config, a.Config) || !jsonEqual(b.Tools, a.Tools) || b.Name != a.Name || b.Model != a.Model ||
			b.Instructions != a.Instructions || strings.Join(b.PhoneNumbers, ",") != strings.Join(a.PhoneNumbers, ",") {
			t.Fatalf("saved unchanged, got\n%+v %s\nwant\n%+v %s", b, b.Config, a, a.Config)
		}
	}
}

// The chat form sets the widget's daily message cap; a cap that is not a
// whole number from 1 up is refused in the form and changes nothing.
func TestAgentFormDailyCap(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	f := url.Values{"name": {"Chat"}, "type": {"chat"}, "status": {"active"}, "maxMessagesPerDay": {"250"}}
	code, _, h := e.post(owner, "/agents", f)
	if code != http.StatusSeeOther {
		t.Fatalf("create: %d", code)
	}
	id := strings.TrimPrefix(strings.Split(h.Get("Location"), "?")[0], "/agents/")
	a, _ := e.site.f.Agents.Get(context.Background(), owner.orgID, id)
	if string(a.Config) != `{"maxMessagesPerDay":250}` {
		t.Fatalf("config %s", a.Config)
	}
	if _, page, _ := e.get(owner, "/agents/"+id); !strings.Contains(page, `name="maxMessagesPerDay"`) || !strings.Contains(page, `value="250"`) {
		t.Fatalf("the form does not show the cap: %.300s", page)
	}
	for _, bad := range []string{"0", "2.5", "many"} {
		f.Set("maxMessagesPerDay", bad)
		if code, body, _ := e.post(owner, "/agents/"+id, f); code != 400 || !strings.Contains(body, "config.maxMessagesPerDay") {
			t.Fatalf("cap %q: %d", bad, code)
		}
	}
	if b, _ := e.site.f.Agents.Get(context.Background(), owner.orgID, id); string(b.Config) != string(a.Config) {
		t.Fatalf("a refused save changed the config: %s", b.Config)
	}
	f.Del("maxMessagesPerDay")
	if code, _, _ := e.post(owner, "/agents/"+id, f); code != http.StatusSeeOther {
		t.Fatalf("clear: %d", code)
	}
	if b, _ := e.site.f.Agents.Get(context.Background(), owner.orgID, id); string(b.Config) != `{}` {
		t.Fatalf("cleared cap: %s", b.Config)
	}
}

// The form sets maxConcurrentCalls and callerIdRotation, and clearing or
// unticking them removes or turns them off.
func TestAgentFormConcurrencyAndRotation(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	base := url.Values{"name": {"Ava"}, "type": {"voice"}, "status": {"active"}, "phones": {"+15550001111"}}
	f := url.Values{"maxConcurrentCalls": {"3"}, "callerIdRotation": {"on"}}
	for k, v := range base {
		f[k] = v
	}
	code, _, h := e.post(owner, "/agents", f)
	if code != http.StatusSeeOther {
		t.Fatalf("create: %d", code)
	}
	id := strings.TrimPrefix(strings.Split(h.Get("Location"), "?")[0], "/agents/")
	a, _ := e.site.f.Agents.Get(context.Background(), owner.orgID, id)
	if string(a.Config) != `{"callerIdRotation":true,"maxConcurrentCalls":3}` {
		t.Fatalf("config %s", a.Config)
	}
	f.Set("maxConcurrentCalls", "2.5")
	if code, body, _ := e.post(owner, "/agents/"+id, f); code != 400 || !strings.Contains(body, "config.maxConcurrentCalls") {
		t.Fatalf("fractional concurrency: %d", code)
	}
	if code, _, _ := e.post(owner, "/agents/"+id, base); code != http.StatusSeeOther {
		t.Fatalf("clear: %d", code)
	}
	a, _ = e.site.f.Agents.Get(context.Background(), owner.orgID, id)
	if string(a.Config) != `{"callerIdRotation":false}` {
		t.Fatalf("after clearing the field and unticking the box: %s", a.Config)
	}
}

// A form never removes a key it does not show: whatever else the stored
// config holds (the knowledge and fallback settings other work adds, a
// nested object) comes back as stored, whichever shown fields change.
func TestMergeConfigKeepsKeysTheFormDoesNotShow(t *testing.T) {
	stored := json.RawMessage(`{"knowledge":{"collections":["c1"],"topK":4},"fallback":"Sorry.","future":[1,{"a":null}],"speed":1.1,"voice":"alloy","theme":"x"}`)
	for _, shown := range []map[string]any{{}, {"speed": 2.0}, {"voice": "echo", "maxConcurrentCalls": 4.0}} {
		got, err := mergeConfig(stored, "voice", shown)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		json.Unmarshal(got, &m)
		for k, want := range map[string]string{"knowledge": `{"collections":["c1"],"topK":4}`, "fallback": `"Sorry."`, "future": `[1,{"a":null}]`} {
			if string(m[k]) != want {
				t.Fatalf("%v: key %s is %s, want %s (config %s)", shown, k, m[k], want, got)
			}
		}
		if _, ok := m["theme"]; ok {
			t.Fatalf("a chat key stays on a voice agent: %s", got)
		}
		if len(m) != 3+len(shown) {
			t.Fatalf("%v: config %s", shown, got)
		}
	}
	if _, err := mergeConfig(json.RawMessage(`[1]`), "voice", nil); err == nil {
		t.Fatal("a stored config that is not an object merged")
	}
}

// formValues is what a browser sends for the form posting to action on
// page: every named input (a checkbox only when checked), the selected
// option of each select, every textarea.
func formValues(t *testing.T, page, action string) url.Values {
	t.Helper()
	start := strings.Index(page, `action="`+action+`"`)
	if start < 0 {
		t.Fatalf("no form posting to %s", action)
	}
	end := strings.Index(page[start:], "</form>")
	form := page[start : start+end]
	attr := func(tag, name string) (string, bool) {
		m := regexp.MustCompile(`\s` + name + `(?:="([^"]*)")?[\s>]`).FindStringSubmatch(tag)
		if m == nil {
			return "", false
		}
		return html.UnescapeString(m[1]), true
	}
	v := url.Values{}
	for _, tag := range regexp.MustCompile(`<input[^>]*>`).FindAllString(form, -1) {
		name, ok := attr(tag, "name")
		if !ok {
			continue
		}
		typ, _ := attr(tag, "type")
		_, checked := attr(tag, "checked")
		if typ == "checkbox" && !checked {
			continue
		}
		val, has := attr(tag, "value")
		if typ == "checkbox" && !has {
			val = "on"
		}
		v.Add(name, val)
	}
	for _, m := range regexp.MustCompile(`(?s)<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>`).FindAllStringSubmatch(form, -1) {
		v.Add(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range regexp.MustCompile(`(?s)<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>`).FindAllStringSubmatch(form, -1) {
		sel := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindStringSubmatch(m[2])
		if sel == nil {
			sel = regexp.MustCompile(`<option value="([^"]*)"`).FindStringSubmatch(m[2])
		}
		v.Add(m[1], html.UnescapeString(sel[1]))
	}
	return v
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return bytes.Equal(p, q)
}

// A chat agent's Voice box sets config.voiceEnabled and brings the Talk
// control to its page; unticked it writes false, and a chat agent
// without it has no Talk control.
func TestAgentFormVoiceEnabled(t *testing.T) {
	e := newSiteEnv(t)
	owner := e.org("acme")
	f := url.Values{"name": {"Chat"}, "type": {"chat"}, "status": {"active"}, "voiceEnabled": {"on"}}
	code, _, h := e.post(owner, "/agents", f)
	if code != http.StatusSeeOther {
		t.Fatalf("create: %d", code)
	}
	id := strings.TrimPrefix(strings.Split(h.Get("Location"), "?")[0], "/agents/")
	if a, _ := e.site.f.Agents.Get(context.Background(), owner.orgID, id); string(a.Config) != `{"voiceEnabled":true}` {
		t.Fatalf("config %s", a.Config)
	}
	if _, page, _ := e.get(owner, "/agents/"+id); !strings.Contains(page, `data-talk="/api/v2/agents/`+id+`/talk"`) ||
		!strings.Contains(page, `name="voiceEnabled" checked`) {
		t.Fatalf("no Talk control or the box unticked: %.300s", page)
	}
	f.Del("voiceEnabled")
	if code, _, _ := e.post(owner, "/agents/"+id, f); code != http.StatusSeeOther {
		t.Fatalf("untick: %d", code)
	}
	if a, _ := e.site.f.Agents.Get(context.Background(), owner.orgID, id); string(a.Config) != `{"voiceEnabled":false}` {
		t.Fatalf("unticked config %s", a.Config)
	}
	if _, page, _ := e.get(owner, "/agents/"+id); strings.Contains(page, "data-talk=") {
		t.Fatal("a chat agent without voice shows the Talk control")
	}
}
