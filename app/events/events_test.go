package events

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/signing"
	"github.com/agentd/agentd/storage/sqldb"
)

// headers are what the worker sends with a body.
func headers(id string, ts time.Time, body []byte, secrets ...string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", signing.Sign(id, ts, body, secrets...))
	return h
}

// Our signatures are the reference library's, for one secret and for two.
func TestSignMatchesStandardWebhooks(t *testing.T) {
	a, b := signing.NewSecret(), signing.NewSecret()
	if !strings.HasPrefix(a, signing.SecretPrefix) || len(a) != len(signing.SecretPrefix)+44 || a == b {
		t.Fatalf("secrets %q %q", a, b)
	}
	body := []byte(`{"id":"e1","type":"ping","data":{}}`)
	now := time.Now()
	ref, _ := standardwebhooks.NewWebhook(a)
	want, _ := ref.Sign("e1", now, body)
	if got := signing.Sign("e1", now, body, a); got != want {
		t.Fatalf("Sign %q, library %q", got, want)
	}
	h := headers("e1", now, body, b, a)
	for _, s := range []string{a, b} {
		v, _ := standardwebhooks.NewWebhook(s)
		if err := v.Verify(body, h); err != nil {
			t.Errorf("verify with either secret: %v", err)
		}
	}
	other, _ := standardwebhooks.NewWebhook(signing.NewSecret())
	if other.Verify(body, h) == nil {
		t.Error("a third secret verifies")
	}
	if signing.Sign("e1", now, body, "whsec_not base64!") != "" {
		t.Error("a malformed secret signs")
	}
}

// Subscriptions: known types or "*", repeats dropped, the bad item named.
func TestCheckEvents(t *testing.T) {
	got, err := checkEvents([]string{"call.ended", " call.ended ", "kb.source.failed"})
	if err != nil || !slices.Equal(got, []string{"call.ended", "kb.source.failed"}) {
		t.Fatalf("%v %v", got, err)
	}
	if got, _ := checkEvents([]string{"call.ended", "*"}); !slices.Equal(got, []string{"*"}) {
		t.Fatalf("wildcard %v", got)
	}
	_, err = checkEvents([]string{"call.ended", "ping"})
	if e, ok := err.(*errs.Error); !ok || e.Kind != errs.Invalid || e.Field != "events.1" {
		t.Fatalf("ping is not subscribable: %v", err)
	}
}

// The backoff schedule lasts about a day over 14 attempts.
func TestBackoffLastsADay(t *testing.T) {
	var total time.Duration
	for _, d := range Backoff {
		total += d
	}
	if len(Backoff)+1 != 14 || total < 22*time.Hour || total > 26*time.Hour {
		t.Fatalf("%d attempts over %s", len(Backoff)+1, total)
	}
}

// FuzzWebhookRequestBody feeds arbitrary request bodies of
// POST /api/v2/webhooks through decoding and validation: it never panics,
// and whatever it accepts is an http(s) URL with a host, at most 2,048
// characters, and a non-empty list of catalogue types or ["*"].
func FuzzWebhookRequestBody(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://example.com/hooks","events":["*"]}`,
		`{"url":"http://x.test:8080/a?b=c","events":["call.ended","call.result"],"description":"CRM"}`,
		`{"url":"ftp://x","events":["call.ended"]}`,
		`{"url":"https://example.com","events":[]}`,
		`{"url":" https://example.com ","events":["call.nope","*"]}`,
		`{"url":"https://[::1]:99/","events":["ping"]}`,
		`{"url":"https://example.com","events":"*"}`,
		`{"events":["*"]}`,
		`{"url":"https://ex\u0000ample.com","events":["batch.completed"],"description":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	svc := &Service{}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in Input
		if json.Unmarshal(body, &in) != nil {
			return
		}
		e, err := svc.validateNew(context.Background(), in)
		if err != nil {
			if k := errs.KindOf(err); k != errs.Invalid {
				t.Fatalf("error of kind %s: %v", k, err)
			}
			return
		}
		u, perr := url.Parse(e.URL)
		if perr != nil || !(strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) ||
			u.Host == "" || len(e.URL) > maxURL {
			t.Fatalf("accepted URL %q", e.URL)
		}
		if len(e.Events) == 0 {
			t.Fatal("accepted no events")
		}
		for _, typ := range e.Events {
			if typ != "*" && !knownType(typ) {
				t.Fatalf("accepted type %q", typ)
			}
		}
	})
}

// FuzzEventBody: whatever an event holds, its webhook body is valid JSON
// that gives back the event's fields, and its signature verifies with the
// reference library.
func FuzzEventBody(f *testing.F) {
	f.Add("e-1", "call.ended", "org-1", []byte(`{"id":"c1","status":"completed"}`), int64(1767225600123))
	f.Add("\"quoted\"\n", "ping", "<org>&", []byte(`null`), int64(0))
	f.Add("ü", "", "", []byte(`[1,2,{"a":"\u2028"}]`), int64(-1))
	secret := signing.NewSecret()
	v, _ := standardwebhooks.NewWebhook(secret)
	f.Fuzz(func(t *testing.T, id, typ, org string, data []byte, at int64) {
		if !json.Valid(data) || !utf8.ValidString(id) || !utf8.ValidString(typ) || !utf8.ValidString(org) {
			return
		}
		at = at % (1 << 45) // years 0 to ~3000
		ev := sqldb.Event{ID: id, Type: typ, OrgID: org, Data: data, CreatedAt: time.UnixMilli(at)}
		body := Body(ev)
		var back Event
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if back.ID != id || back.Type != typ || back.OrganizationID != org {
			t.Fatalf("round trip %+v from %q", back, body)
		}
		if id == "" || strings.ContainsAny(id, "\r\n") {
			return // not a header value
		}
		now := time.Now()
		if err := v.Verify(body, headers(id, now, body, secret)); err != nil {
			t.Fatalf("verify: %v", err)
		}
	})
}
