package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/agentstore"
)

// FuzzAgentInput feeds arbitrary bodies to the agent validator: every failure is
// an Invalid *errs.Error naming its field, and an accepted agent is a fixed
// point of validation with E.164 numbers and object config. (The HTTP
// decoder in front of it has its own fuzz target in app.)
func FuzzAgentInput(f *testing.F) {
	f.Add([]byte(`{"name":"a","type":"voice","config":{"voice":"alloy","speed":1.5,"interruptionThreshold":0.2},"phoneNumbers":["+1 (415) 555-0100"]}`))
	f.Add([]byte(`{"name":"a","type":"voice","config":{"voicemail":{"action":"leave_message","message":"hi"},"transferDestinations":[{"name":"Sales","number":"+14155550100","mode":"warm"},{"name":"Desk","sipUri":"sip:desk@pbx.example.com"}]}}`))
	f.Add([]byte(`{"name":"b","type":"chat","config":{"theme":"dark","primaryColor":"#A0b1C2","position":"top-left","allowedDomains":["*.x.io"]},"tools":[{"id":"t","name":"n","description":"d"}]}`))
	f.Add([]byte(`{"name":" ","type":"chat","status":"deployed","tools":[{"id":"t","name":"n"},{"id":"t","name":"m"}]}`))
	f.Add([]byte(`{"name":"c","type":"voice","config":{"speed":1e999}}`))
	f.Add([]byte(`{"name":"d","type":"voice","config":null,"tools":null,"phoneNumbers":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var in Input
		if err := json.Unmarshal(body, &in); err != nil {
			return
		}
		a := agentstore.Agent{Status: "active"}
		in.apply(&a)
		if err := validate(&a); err != nil {
			assertInvalidField(t, err)
			return
		}
		again := a
		if err := validate(&again); err != nil {
			t.Fatalf("accepted agent fails validation again: %v", err)
		}
		if !bytes.Equal(again.Config, a.Config) || !bytes.Equal(again.Tools, a.Tools) {
			t.Fatalf("normalization is not stable: %s/%s then %s/%s", a.Config, a.Tools, again.Config, again.Tools)
		}
		var obj map[string]any
		if err := json.Unmarshal(a.Config, &obj); err != nil || obj == nil {
			t.Fatalf("config %s is not an object", a.Config)
		}
		for _, p := range a.PhoneNumbers {
			if !clean.IsE164(p) || a.Type != "voice" {
				t.Fatalf("phone %q kept on a %s agent", p, a.Type)
			}
		}
	})
}

// FuzzParseAgentQuery: any query string is either refused as Invalid or gives a
// page within bounds.
func FuzzParseAgentQuery(f *testing.F) {
	for _, s := range []string{"", "limit=10&offset=20", "type=voice&status=active", "limit=0", "limit=101", "offset=-1",
		"limit=9999999999999999999999", "type=robot", "limit=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseQuery(v)
		if err != nil {
			assertInvalidField(t, err)
			return
		}
		if q.Limit < 1 || q.Limit > maxLimit || q.Offset < 0 {
			t.Fatalf("out of bounds: %+v", q)
		}
	})
}

// assertInvalidField checks err is an Invalid *errs.Error whose message
// starts with its field path, as the golden bodies show it.
func assertInvalidField(t *testing.T, err error) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field == "" || !strings.HasPrefix(e.Message, e.Field+": ") {
		t.Fatalf("not an invalid field error: %#v", err)
	}
}
