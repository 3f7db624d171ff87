package voice

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/internal/testkit/llmtest"
)

// send_dtmf: the keys are pressed once the answer's words have played,
// the transcript notes them and the model reads the result next turn.
func TestSendDTMFPressesKeys(t *testing.T) {
	r := newRig(t, nil, nil)
	r.texts("For support press two.", "Please hold.")
	r.model.Push(llmtest.Reply{Content: "Pressing two.",
		ToolCalls: []llmtest.ToolCall{{ID: "k1", Name: "send_dtmf", Arguments: `{"digits":"2 #"}`}}},
		llmtest.Reply{Content: "Thanks."})
	r.start()
	r.media.say(voiceOf(t, "For support press two."))
	waitFor(t, 10*time.Second, "the keys", func() bool {
		r.media.mu.Lock()
		defer r.media.mu.Unlock()
		return r.media.keys != ""
	})
	r.media.mu.Lock()
	keys, at := r.media.keys, r.media.keysAt
	r.media.mu.Unlock()
	if keys != "2#" || at < int64(2*wordSamples) {
		t.Errorf("pressed %q after %d samples, want 2# after the answer's %d", keys, at, 2*wordSamples)
	}
	if !strings.Contains(strings.Join(r.model.Last().ToolNames(), " "), "send_dtmf") {
		t.Errorf("the model was offered %v, not send_dtmf", r.model.Last().ToolNames())
	}
	r.media.say(voiceOf(t, "Please hold."))
	waitFor(t, 10*time.Second, "the next turn", func() bool { return len(r.model.Got()) >= 2 })
	if got := r.model.Last().All(); !strings.Contains(got, `"sent":"2#"`) {
		t.Errorf("the model's next turn lacks the keys' result:\n%s", got)
	}
	if tr := lines(r.transcript()); !strings.Contains(tr, "tool: send_dtmf {\"digits\":\"2 #\"}\nagent: Pressing two.") {
		t.Errorf("transcript:\n%s", tr)
	}
}

// Keys the model gets wrong are refused with a reason it can read; none
// is pressed.
func TestSendDTMFRefusesBadKeys(t *testing.T) {
	r := newRig(t, nil, nil)
	r.texts("Enter your code.")
	r.model.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "k1", Name: "send_dtmf", Arguments: `{"digits":"12x"}`}}})
	r.start()
	r.media.say(voiceOf(t, "Enter your code."))
	waitFor(t, 10*time.Second, "the tool's line", func() bool { return strings.Contains(lines(r.transcript()), "send_dtmf") })
	testkit.Never(t, 200*time.Millisecond, func() bool {
		r.media.mu.Lock()
		defer r.media.mu.Unlock()
		return r.media.keys != ""
	}, "keys pressed after a refused send_dtmf")
}

func TestParseDigits(t *testing.T) {
	for in, want := range map[string]string{
		`{"digits":"123#"}`: "123#", `{"digits":"1 2-3,*"}`: "123*", `{"digits":"abcd"}`: "ABCD", `{"digits":4711}`: "4711",
		`{"digits":""}`: "", `{"digits":"12x"}`: "", `{}`: "", `[]`: "", `{"digits":-1}`: "", `{"digits":1.5}`: "",
		`{"digits":"` + strings.Repeat("1", MaxDigits+1) + `"}`: "", `{"digits":"` + strings.Repeat("1", MaxDigits) + `"}`: strings.Repeat("1", MaxDigits),
	} {
		got, err := ParseDigits(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseDigits(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func FuzzParseDigits(f *testing.F) {
	for _, s := range []string{`{"digits":"123#"}`, `{"digits":12}`, `{"digits":"a b-c"}`, `{}`, `null`, `{"digits":"ä"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseDigits(in)
		if err != nil {
			return
		}
		if d == "" || len(d) > MaxDigits || strings.Trim(d, "0123456789*#ABCD") != "" {
			t.Fatalf("ParseDigits(%q) = %q", in, d)
		}
	})
}

func TestParseTransfer(t *testing.T) {
	dests := []Destination{{Name: "Sales", Number: "+14155550100", Mode: "cold"}, {Name: "Front desk", SIPURI: "sip:desk@pbx", Mode: "warm"}}
	for in, want := range map[string]string{
		`{"destination":"sales","reason":"  wants\na cake "}`: "Sales|wants a cake", `{"destination":"Front desk"}`: "Front desk|",
		`{"destination":"Billing"}`: "", `{"destination":7}`: "", `{}`: "", `[1]`: "",
	} {
		d, reason, err := ParseTransfer(in, dests)
		got := ""
		if err == nil {
			got = d.Name + "|" + reason
		}
		if got != want {
			t.Errorf("ParseTransfer(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func FuzzParseTransfer(f *testing.F) {
	dests := []Destination{{Name: "Sales", Number: "+14155550100"}, {Name: "Desk", SIPURI: "sip:desk@pbx"}}
	for _, s := range []string{`{"destination":"Sales","reason":"x"}`, `{"destination":"desk"}`, `{"destination":null}`, `{"reason":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, reason, err := ParseTransfer(in, dests)
		if err != nil {
			return
		}
		if d.Name != "Sales" && d.Name != "Desk" || len([]rune(reason)) > 500 || strings.ContainsAny(reason, "\n\r\t") {
			t.Fatalf("ParseTransfer(%q) = %+v %q", in, d, reason)
		}
	})
}
