package agents

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/testkit/dbtest"
	"github.com/agentd/agentd/internal/testkit/storetest"
	"github.com/agentd/agentd/storage"
	"github.com/agentd/agentd/storage/agentstore"
)

// openDB opens a fresh database with one organization.
func openDB(t *testing.T) (*storage.Stores, string) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t, dbtest.Path(t, "agents.db"))
	o, err := db.Orgs.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return db, o.ID
}

func ptr[T any](v T) *T { return &v }

// kindField is the kind, field and message of err (Internal without an *errs.Error).
func kindField(err error) (errs.Kind, string, string) {
	var e *errs.Error
	if !errors.As(err, &e) {
		return errs.Internal, "", ""
	}
	return e.Kind, e.Field, e.Message
}

// Each refused agent names the field at fault with its path; the message
// is the one clients see (testdata/golden/agents pins the HTTP bodies).
func TestValidateFieldPaths(t *testing.T) {
	for _, c := range []struct {
		body, field, msg string
	}{
		{`{"type":"voice"}`, "name", "name: required (1 to 200 characters)"},
		{`{"name":"a"}`, "type", "type: required (voice or chat)"},
		{`{"name":"a","type":"robot"}`, "type", `type: must be voice or chat, got "robot"`},
		{`{"name":"a","type":"voice","status":"x"}`, "status", `status: must be one of active, inactive, training, deployed, got "x"`},
		{`{"name":"a","type":"voice","model":"` + strings.Repeat("m", 201) + `"}`, "model", "model: at most 200 characters"},
		{`{"name":"a","type":"voice","config":[1]}`, "config", "config: must be an object"},
		{`{"name":"a","type":"voice","config":{"speed":9}}`, "config.speed", "config.speed: must be a number from 0.25 to 4"},
		{`{"name":"a","type":"voice","config":{"endpointingMs":50}}`, "config.endpointingMs", "config.endpointingMs: must be an integer from 100 to 5000"},
		{`{"name":"a","type":"voice","config":{"endpointingMs":600.5}}`, "config.endpointingMs", "config.endpointingMs: must be an integer from 100 to 5000"},
		{`{"name":"a","type":"voice","config":{"silenceTimeoutSeconds":1}}`, "config.silenceTimeoutSeconds", "config.silenceTimeoutSeconds: must be an integer from 5 to 3600"},
		{`{"name":"a","type":"voice","config":{"recording":"yes"}}`, "config.recording", "config.recording: must be true or false"},
		{`{"name":"a","type":"voice","config":{"firstMessage":7}}`, "config.firstMessage", "config.firstMessage: must be a string"},
		{`{"name":"a","type":"voice","config":{"endCallMessage":"` + strings.Repeat("m", 1001) + `"}}`, "config.endCallMessage", "config.endCallMessage: at most 1000 characters"},
		{`{"name":"a","type":"voice","config":{"voicemail":"hangup"}}`, "config.voicemail", "config.voicemail: must be an object {action, message}"},
		{`{"name":"a","type":"voice","config":{"voicemail":{}}}`, "config.voicemail.action", "config.voicemail.action: is required: hangup or leave_message"},
		{`{"name":"a","type":"voice","config":{"voicemail":{"action":"beep"}}}`, "config.voicemail.action", "config.voicemail.action: must be hangup or leave_message"},
		{`{"name":"a","type":"voice","config":{"voicemail":{"action":"leave_message"}}}`, "config.voicemail.message", "config.voicemail.message: is required to leave a message"},
		{`{"name":"a","type":"voice","config":{"voicemail":{"action":"hangup","after":1}}}`, "config.voicemail.after", "config.voicemail.after: not a field of voicemail (allowed: action, message)"},
		{`{"name":"a","type":"voice","config":{"voicemail":{"action":"leave_message","message":"` + strings.Repeat("m", 1001) + `"}}}`, "config.voicemail.message", "config.voicemail.message: at most 1000 characters"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":{}}}`, "config.transferDestinations", "config.transferDestinations: must be an array of {name, number or sipUri, description, mode}"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"number":"+14155550100"}]}}`, "config.transferDestinations.0.name", "config.transferDestinations.0.name: is required"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"name":"Sales"}]}}`, "config.transferDestinations.0", "config.transferDestinations.0: needs a number or a sipUri, not both"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"name":"Sales","number":"555"}]}}`, "config.transferDestinations.0.number", "config.transferDestinations.0.number: must be an E.164 number (+14155550100)"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"name":"Sales","sipUri":"http://x"}]}}`, "config.transferDestinations.0.sipUri", "config.transferDestinations.0.sipUri: must be a sip: URI (sip:desk@pbx.example.com)"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"name":"Sales","number":"+14155550100","mode":"hot"}]}}`, "config.transferDestinations.0.mode", "config.transferDestinations.0.mode: must be cold or warm"},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"name":"Sales","number":"+14155550100"},{"name":"sales","sipUri":"sip:s@x"}]}}`, "config.transferDestinations.1.name", `config.transferDestinations.1.name: "sales" is named twice`},
		{`{"name":"a","type":"voice","config":{"transferDestinations":[{"name":"Sales","number":"+14155550100","queue":1}]}}`, "config.transferDestinations.0.queue", "config.transferDestinations.0.queue: not a field of a transfer destination (allowed: name, number, sipUri, description, mode)"},
		{`{"name":"a","type":"chat","config":{"title":"` + strings.Repeat("t", 101) + `"}}`, "config.title", "config.title: at most 100 characters"},
		{`{"name":"a","type":"chat","config":{"maxConcurrentCalls":2}}`, "config.maxConcurrentCalls",
			"config.maxConcurrentCalls: not a setting of a chat agent (allowed: theme, primaryColor, position, greeting, placeholder, title, allowedDomains, maxMessagesPerDay, voiceEnabled, maxVoiceMinutesPerDay, voice, speed, interruptionThreshold, firstMessage, endCallMessage, endpointingMs, silenceTimeoutSeconds, recording)"},
		{`{"name":"a","type":"chat","config":{"voiceEnabled":"yes"}}`, "config.voiceEnabled", "config.voiceEnabled: must be true or false"},
		{`{"name":"a","type":"chat","config":{"maxVoiceMinutesPerDay":0}}`, "config.maxVoiceMinutesPerDay",
			"config.maxVoiceMinutesPerDay: must be an integer from 1 to 100000"},
		{`{"name":"a","type":"chat","config":{"firstMessage":7}}`, "config.firstMessage", "config.firstMessage: must be a string"},
		{`{"name":"a","type":"voice","config":{"voiceEnabled":true}}`, "config.voiceEnabled",
			"config.voiceEnabled: not a setting of a voice agent (allowed: voice, speed, interruptionThreshold, maxConcurrentCalls, callerIdRotation, firstMessage, endCallMessage, endpointingMs, silenceTimeoutSeconds, recording, voicemail, transferDestinations)"},
		{`{"name":"a","type":"chat","config":{"allowedDomains":["ok.com","https://x.com/"]}}`, "config.allowedDomains.1",
			`config.allowedDomains.1: "https://x.com/" is not a site (example.com, *.example.com, https://example.com or http://localhost:8080)`},
		{`{"name":"a","type":"chat","tools":[{"id":"t","name":"n"},{"id":"t","name":"m"}]}`, "tools.1.id", `tools.1.id: "t" is used by another tool`},
		{`{"name":"a","type":"chat","tools":[{"id":"t","name":"n","url":"x"}]}`, "tools.0.url", "tools.0.url: must be an http or https URL"},
		{`{"name":"a","type":"chat","tools":[{"id":"t","name":"n","ur":"x"}]}`, "tools.0.ur", "tools.0.ur: unknown key (a tool has id, name, description, parameters, url)"},
		{`{"name":"a","type":"chat","tools":[{"id":"t","name":"n","url":"ftp://h/x"}]}`, "tools.0.url", "tools.0.url: must be an http or https URL"},
		{`{"name":"a","type":"chat","tools":[{"id":"t","name":"n","parameters":[]}]}`, "tools.0.parameters", "tools.0.parameters: must be a JSON Schema object"},
		{`{"name":"a","type":"chat","knowledge":{"topK":0}}`, "knowledge.topK", "knowledge.topK: must be an integer from 1 to 20"},
		{`{"name":"a","type":"chat","knowledge":{"topK":21}}`, "knowledge.topK", "knowledge.topK: must be an integer from 1 to 20"},
		{`{"name":"a","type":"chat","knowledge":{"collectionIds":"x"}}`, "knowledge.collectionIds", "knowledge.collectionIds: must be an array of collection ids"},
		{`{"name":"a","type":"chat","knowledge":{"listing":true}}`, "knowledge.listing", "knowledge.listing: unknown key (knowledge has collectionIds, topK, listings)"},
		{`{"name":"a","type":"chat","phoneNumbers":["+15551230000"]}`, "phoneNumbers", "phoneNumbers: only voice agents have phone numbers"},
		{`{"name":"a","type":"voice","phoneNumbers":["+15551230000","+1 555 123 0000"]}`, "phoneNumbers.1", "phoneNumbers.1: +15551230000 is listed twice"},
	} {
		var in Input
		if err := json.Unmarshal([]byte(c.body), &in); err != nil {
			t.Fatal(err)
		}
		a := agentstore.Agent{Status: "active"}
		in.apply(&a)
		kind, field, msg := kindField(validate(&a))
		if kind != errs.Invalid || field != c.field || msg != c.msg {
			t.Errorf("%s: %v %q %q, want %q %q", c.body, kind, field, msg, c.field, c.msg)
		}
	}
}

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(url.Values{"type": {"chat"}, "limit": {"7"}, "offset": {"3"}})
	if err != nil || q != (Query{Type: "chat", Limit: 7, Offset: 3}) {
		t.Fatalf("%+v %v", q, err)
	}
	if q, err := ParseQuery(url.Values{}); err != nil || q.Limit != defaultLimit {
		t.Fatalf("defaults %+v %v", q, err)
	}
	for name, v := range map[string]url.Values{"limit": {"limit": {"101"}}, "offset": {"offset": {"-1"}}, "status": {"status": {"gone"}}} {
		_, err := ParseQuery(v)
		if kind, field, _ := kindField(err); kind != errs.Invalid || field != name {
			t.Errorf("%v: %v %q", v, kind, field)
		}
	}
}

// The use cases over a real database: create, read, update, soft delete,
// and the not-found messages of agents and jobs.
func TestAgentAndJobUseCases(t *testing.T) {
	ctx := context.Background()
	db, org := openDB(t)
	a, err := svc(db).Create(ctx, org, Input{Name: ptr(" Desk "), Type: ptr("voice"), PhoneNumbers: &[]string{"+1 (415) 555-0100"}})
	if err != nil || a.Name != "Desk" || a.Status != "active" || a.PhoneNumbers[0] != "+14155550100" {
		t.Fatalf("create %+v %v", a, err)
	}
	if _, err := svc(db).Update(ctx, org, a.ID, Input{Type: ptr("chat")}); err == nil {
		t.Fatal("voice -> chat kept the phone numbers")
	}
	if got, _ := svc(db).Get(ctx, org, a.ID); got.Type != "voice" {
		t.Fatalf("a refused update changed the agent: %+v", got)
	}
	if d, err := svc(db).Delete(ctx, org, a.ID); err != nil || d.Status != "inactive" {
		t.Fatalf("delete %+v %v", d, err)
	}
	if list, more, err := svc(db).List(ctx, org, Query{}); err != nil || more || len(list) != 1 {
		t.Fatalf("list %v %v %v", list, more, err)
	}
	for _, err := range []error{
		func() error { _, err := svc(db).Get(ctx, org, "nope"); return err }(),
		func() error { _, err := svc(db).Update(ctx, org, "nope", Input{}); return err }(),
		func() error {
			_, err := svc(db).CreateJob(ctx, org, JobInput{AgentID: ptr("nope"), Name: ptr("x")})
			return err
		}(),
	} {
		if kind, _, msg := kindField(err); kind != errs.NotFound || msg != "agent not found" {
			t.Errorf("%v: %v %q", err, kind, msg)
		}
	}
	j, err := svc(db).CreateJob(ctx, org, JobInput{AgentID: &a.ID, Name: ptr(" Call back ")})
	if err != nil || j.Name != "Call back" || j.TrustLevel != "supervised" || j.TriggerType != "manual" {
		t.Fatalf("create job %+v %v", j, err)
	}
	if _, err := svc(db).UpdateJob(ctx, org, j.ID, JobInput{TrustLevel: ptr("full")}); err == nil {
		t.Fatal("bad trust level accepted")
	} else if kind, field, _ := kindField(err); kind != errs.Invalid || field != "trustLevel" {
		t.Errorf("bad trust level: %v %q", kind, field)
	}
	ws, err := svc(db).ListWorkers(ctx, org)
	if err != nil || len(ws) != 1 || len(ws[0].AssignedJobs) != 1 || ws[0].WorkforceStatus != "inactive" {
		t.Fatalf("workers %+v %v", ws, err)
	}
	if err := svc(db).DeleteJob(ctx, org, j.ID); err != nil {
		t.Fatal(err)
	}
	if kind, _, msg := kindField(svc(db).DeleteJob(ctx, org, j.ID)); kind != errs.NotFound || msg != "job not found" {
		t.Errorf("second delete: %v %q", kind, msg)
	}
}

// svc is the feature over db's stores, as app/features builds it.
func svc(db *storage.Stores) *Service { return New(Deps{Agents: db.Agents, KB: db.KB}) }
