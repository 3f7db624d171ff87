package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/agentd/agentd/internal/testkit/speechtest"
	"github.com/agentd/agentd/internal/wav"
)

// voiceShots is where the voice tests leave their screenshots.
const voiceShots = "/tmp/shots-browservoice"

// callerWAV is the fake microphone: silence while the agent says its
// first message, the question spoken by espeak-ng (through sox), then a
// long silence (Chromium plays the file in a loop).
func callerWAV(t *testing.T) string {
	t.Helper()
	const rate = 16000
	pcm := append(make([]int16, 4*rate), speechtest.Espeak(t, question, rate)...)
	pcm = append(pcm, make([]int16, 12*rate)...)
	p := filepath.Join(t.TempDir(), "caller.wav")
	if err := os.WriteFile(p, wav.Encode(wav.Format{Rate: rate, Channels: 1}, pcm), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startVoiceBrowser is startBrowser with a fake microphone playing wavPath,
// permission granted and autoplay allowed. Without Chromium the test is
// skipped, except under CI where it fails.
func startVoiceBrowser(t *testing.T, wavPath string) context.Context {
	t.Helper()
	return startBrowser(t, chromedp.WindowSize(1280, 900),
		chromedp.Flag("use-fake-ui-for-media-stream", true), chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wavPath), chromedp.Flag("autoplay-policy", "no-user-gesture-required"))
}

// listenJS samples the agent's voice as the page plays it (an
// AnalyserNode on the played audio, found by the expression an): each
// loud 20 ms sample's dominant frequency goes to window.__heard.
func listenJS(an string) string {
	return `(() => { const a = ` + an + `; if (!a) return false; if (window.__heard) return true;
window.__heard = []; const f = new Float32Array(a.frequencyBinCount), d = new Float32Array(a.fftSize);
setInterval(() => { a.getFloatTimeDomainData(d); let s = 0; for (const v of d) s += v * v;
  const rms = Math.sqrt(s / d.length); if (rms < 0.05) return; a.getFloatFrequencyData(f);
  let best = 0; for (let i = 1; i < f.length; i++) if (f[i] > f[best]) best = i;
  window.__heard.push(Math.round(best * a.context.sampleRate / a.fftSize)); }, 20);
return true; })()`
}

// waitTalk is waitJS showing the voice session's part of the page when
// the condition never holds.
func waitTalk(t *testing.T, tab context.Context, what string, timeout time.Duration, js, part string) {
	t.Helper()
	if !pollJS(tab, timeout, js) {
		html, _ := chromedp.Run(tab, chromedp.OuterHTML(css(part)))
		heard, _ := chromedp.Run(tab, chromedp.Evaluate[[]int](`window.__heard || []`))
		t.Fatalf("%s: not after %s: %.3000s\nheard %v", what, timeout, html, heard)
	}
}

// heardInOrder checks the page played the first message's tone, then the
// answer's: it returns how many samples of each were heard, in order.
func heardInOrder(t *testing.T, tab context.Context) (first, answer int) {
	t.Helper()
	hz := get(tab, t, "heard", chromedp.Evaluate[[]int](`window.__heard || []`))
	seenAnswer := false
	for _, f := range hz {
		switch {
		case f > 380 && f < 500:
			if seenAnswer {
				t.Fatalf("the first message's tone played after the answer's: %v", hz)
			}
			first++
		case f > 900 && f < 1100:
			seenAnswer = true
			answer++
		}
	}
	return first, answer
}

// The dashboard's Talk control in real Chromium with a fake microphone
// speaking espeak-ng's question: the first message plays, then the
// answer (measured on the played audio), the live transcript shows both
// sides and the answer's latency, and the call record holds the
// transcript and latency. A second session with speech-to-text down ends
// with the fallback sentence and the reason, in the page and the record.
func TestTalkInBrowser(t *testing.T) {
	e := newTalkEnv(t, "http://localhost:8123", nil)
	ctx := startVoiceBrowser(t, callerWAV(t))
	signInBrowser(t, ctx, e.testEnv)
	if err := os.MkdirAll(voiceShots, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("agent page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(e.url+"/agents/"+e.voiceID),
		chromedp.WaitVisible(css("[data-talk-start]")), shoot(voiceShots, "talk-1280-idle"))
	run("start", chromedp.Click(css("[data-talk-start]")))
	waitJS(t, ctx, "the agent's voice", 20*time.Second, listenJS(`document.querySelector("[data-talk]").agentdAnalyser`))
	waitTalk(t, ctx, "the transcript", 40*time.Second, `document.querySelectorAll(".talk-log .talk-agent").length >= 2 &&
		document.querySelectorAll(".talk-log .talk-user").length >= 1 && !!document.querySelector(".talk-log .talk-latency")`, "[data-talk]")
	first, answer := heardInOrder(t, ctx)
	if first < 5 || answer < 5 {
		t.Fatalf("played audio: %d samples of the first message's tone, %d of the answer's", first, answer)
	}
	log := get(ctx, t, "transcript", chromedp.Text(css(".talk-log")))
	for _, want := range []string{firstWords, question, answerText, "voice-to-voice"} {
		if !strings.Contains(log, want) {
			t.Fatalf("transcript %q lacks %q", log, want)
		}
	}
	run("mute", chromedp.Click(css("[data-talk-mute]")))
	if p := get(ctx, t, "mute state", chromedp.Evaluate[string](`document.querySelector("[data-talk-mute]").getAttribute("aria-pressed")`)); p != "true" {
		t.Fatalf("mute aria-pressed %q", p)
	}
	run("shots", shoot(voiceShots, "talk-1280"), chromedp.EmulateViewport(360, 800), shoot(voiceShots, "talk-360"),
		chromedp.EmulateViewport(1280, 900))
	callID := get(ctx, t, "call id", chromedp.Evaluate[string](`document.querySelector("[data-talk]").dataset.callId`))
	run("hang up", chromedp.Click(css("[data-talk-hangup]")))
	call := e.waitCallEnded(callID)
	if call.Direction != "web" || call.Status != "completed" || !call.said("agent", firstWords) || !call.said("user", question) ||
		!call.said("agent", answerText) || call.Latency == nil || len(call.Latency.Turns) == 0 {
		t.Fatalf("call record: %+v", call)
	}
	run("calls page", chromedp.Navigate(e.url+"/calls"), chromedp.WaitVisible(css(fmt.Sprintf(`tr[data-call=%q]`, callID))))

	// Speech-to-text down: the fallback sentence, then the end with the
	// service named.
	for range 5 {
		e.speech.PushTranscripts(speechtest.Transcript{Status: 503})
	}
	run("again", chromedp.Navigate(e.url+"/agents/"+e.voiceID), chromedp.WaitVisible(css("[data-talk-start]")),
		chromedp.Click(css("[data-talk-start]")))
	waitJS(t, ctx, "the end for speech-to-text", 40*time.Second,
		`document.querySelector("[data-talk-status]").textContent.includes("speech-to-text service unavailable")`)
	failed := get(ctx, t, "call id", chromedp.Evaluate[string](`document.querySelector("[data-talk]").dataset.callId`))
	call = e.waitCallEnded(failed)
	if call.Status != "failed" || call.Reason != "speech-to-text service unavailable" || !call.said("agent", firstWords) {
		t.Fatalf("failed call record: %+v", call)
	}
	if f := get(ctx, t, "focus", chromedp.Evaluate[bool](`document.activeElement === document.querySelector("[data-talk-start]")`)); !f {
		t.Fatal("after the end the focus is not back on Start talking")
	}
}

// The widget's microphone in real Chromium on a page of another origin
// (strict CSP allowing only agentd): reached with the keyboard, it starts
// a voice session; the first message plays, then the answer to the fake
// microphone's question (measured on the played audio), both sides
// appear in the chat, and the call record holds them with the latency.
func TestWidgetVoiceInBrowser(t *testing.T) {
	var agentd, agentID string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A strict CSP that lists agentd for scripts and for connections,
		// its WebSocket included (an http source does not match ws).
		hostPage(agentd, agentID).ServeHTTP(&cspAdd{ResponseWriter: w, src: " ws" + strings.TrimPrefix(agentd, "http")}, r)
	}))
	t.Cleanup(site.Close)
	port := site.URL[strings.LastIndex(site.URL, ":")+1:]
	listed := "http://localhost:" + port
	e := newTalkEnv(t, listed, map[string]any{"greeting": "Hi! Ask me about the Lisbon bakery."})
	agentd, agentID = e.url, e.agentID
	ctx := startVoiceBrowser(t, callerWAV(t))
	if err := os.MkdirAll(voiceShots, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wait := func(what string, timeout time.Duration, cond string) {
		t.Helper()
		if !pollJS(ctx, timeout, in(cond)) {
			html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](in(`return r.querySelector(".panel").innerHTML`)))
			t.Fatalf("%s: not after %s: %s\nlog: %s", what, timeout, html, lastLines(e.logs.String(), 15))
		}
	}
	run("load", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(listed+"/"))
	wait("launcher", 20*time.Second, `return !!r.querySelector(".launch")`)
	run("open", do(in(`r.querySelector(".launch").click(); return true`)))
	wait("the microphone shown", 20*time.Second, `const m = r.querySelector(".mic"); return !!m && !m.hidden && m.getAttribute("aria-label") === "Talk by voice"`)
	run("shot", shoot(voiceShots, "widget-1280-idle"))
	// The keyboard: Tab from the message box reaches the microphone,
	// Enter presses it.
	run("mic by keyboard", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	wait("pressed", 10*time.Second, `return r.querySelector(".mic").getAttribute("aria-pressed") === "true" && r.querySelector(".mic").getAttribute("aria-label") === "Stop talking"`)
	waitTalk(t, ctx, "the agent's voice", 20*time.Second, listenJS(`document.querySelector("[data-agentd-widget]").agentdAnalyser`), "body")
	wait("both sides in the chat", 40*time.Second, `const t = r.querySelector(".log").textContent;
		return t.includes(`+jsString(firstWords)+`) && t.includes(`+jsString(question)+`) && t.includes(`+jsString(answerText)+`)`)
	first, answer := heardInOrder(t, ctx)
	if first < 5 || answer < 5 {
		t.Fatalf("played audio: %d samples of the first message's tone, %d of the answer's", first, answer)
	}
	run("shots", shoot(voiceShots, "widget-1280"), chromedp.EmulateViewport(360, 740), shoot(voiceShots, "widget-360"),
		chromedp.EmulateViewport(1280, 800))
	run("stop", do(in(`r.querySelector(".mic").click(); return true`)))
	wait("stopped", 10*time.Second, `return r.querySelector(".mic").getAttribute("aria-pressed") === "false" && !r.querySelector("textarea").disabled`)

	var list struct {
		Data struct {
			Calls []struct {
				ID string `json:"id"`
			} `json:"calls"`
		} `json:"data"`
	}
	if code := e.doJSON("GET", "/api/v1/calls?direction=web&agentId="+e.agentID, e.key, nil, &list); code != 200 || len(list.Data.Calls) != 1 {
		t.Fatalf("web calls: %d %+v", code, list)
	}
	call := e.waitCallEnded(list.Data.Calls[0].ID)
	if !call.said("agent", firstWords) || !call.said("user", question) || !call.said("agent", answerText) ||
		call.Latency == nil || len(call.Latency.Turns) == 0 {
		t.Fatalf("call record: %+v", call)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// lastLines is the end of a log.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// cspAdd adds sources to the connect-src of the page's CSP.
type cspAdd struct {
	http.ResponseWriter
	src   string
	wrote bool
}

func (c *cspAdd) WriteHeader(code int) {
	if !c.wrote {
		c.wrote = true
		h := c.Header()
		h.Set("Content-Security-Policy", strings.Replace(h.Get("Content-Security-Policy"), "; style-src", c.src+"; style-src", 1))
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *cspAdd) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}
