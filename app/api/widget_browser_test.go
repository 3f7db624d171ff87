package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// hostPage is a site's page embedding the snippet under a strict CSP that
// allows only the agentd origin, with hostile CSS that must neither reach
// the widget nor be touched by the widget's own.
func hostPage(agentd, agentID string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", fmt.Sprintf("default-src 'none'; script-src %[1]s; connect-src %[1]s; style-src 'self'", agentd))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/host.css" {
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, `* { font-family: serif !important; } button { background: red !important; } .msg { background: rgb(250, 240, 200); }`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Lisbon bakery</title><link rel="stylesheet" href="/host.css"></head>
<body><h1>Lisbon bakery</h1><p class="msg" id="hostmsg">Fresh bread every morning.</p>
<script src="%s/widget.js" data-agent="%s" async></script></body></html>`, agentd, agentID)
	})
}

// in evaluates JS against the widget's shadow root, bound as r.
func in(js string) string {
	return `(() => { const r = document.querySelector("[data-agentd-widget]")?.shadowRoot; if (!r) return false; ` + js + ` })()`
}

// do evaluates JS as a step.
func do(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](js)(ctx, t)
		return err
	})
}

// The widget in real Chromium on a page of another origin: the greeting,
// a question answered from the knowledge with its citation, the
// conversation kept across a reload, keyboard use (focus, trap, Escape),
// hostile knowledge text shown as text, 1280 and 360 px, and the same page
// from an unlisted origin showing "unavailable" while the server refuses
// the session.
func TestWidgetInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	look := map[string]any{"primaryColor": "#0f766e", "greeting": "Hi! Ask me about the Lisbon bakery.", "placeholder": "Ask about hours, returns…"}
	e := newWidgetEnv(t, false, look)
	evil := "Gift card balances can be checked in the shop. <img src=x onerror=\"window.__xss=1\"> " +
		"See [your balance](javascript:window.__xss=2) or [our terms](https://example.com/terms)."
	if code, out := upsert(e.testEnv, e.key, map[string]any{"collectionId": e.col, "externalId": "gift-cards",
		"title": "Gift cards", "content": "# Gift cards\n\n" + evil}); code >= 300 {
		t.Fatalf("upsert: %d %v", code, out)
	}
	e.waitProcessed(e.key, e.col)
	site := httptest.NewServer(hostPage(e.url, e.agentID))
	t.Cleanup(site.Close)
	port := site.URL[strings.LastIndex(site.URL, ":")+1:]
	listed, unlisted := "http://localhost:"+port+"/", "http://127.0.0.1:"+port+"/"
	look["allowedDomains"] = []string{"http://localhost:" + port} // origins are scheme, host and port
	if code, _, b := e.do("PATCH", "/api/v1/agents/"+e.agentID, e.key, map[string]any{"config": look}); code != 200 {
		t.Fatalf("list the site: %d %s", code, b)
	}
	shots := screenshots(t)

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wait := func(what, cond string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](in(cond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](in(`return r.innerHTML`)))
			t.Fatalf("%s: %v\nwidget: %s", what, err, html)
		}
	}
	check := func(what, cond string) {
		t.Helper()
		if !get(ctx, t, what, chromedp.Evaluate[bool](in(cond))) {
			html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](in(`return r.innerHTML`)))
			t.Fatalf("%s: false\nwidget: %s", what, html)
		}
	}
	typeAndSend := func(text string) {
		t.Helper()
		run("type "+text, chromedp.KeyEvent(text), chromedp.KeyEvent(kb.Enter))
	}
	open := func() {
		t.Helper()
		run("open", do(in(`r.querySelector(".launch").click(); return true`)))
	}

	// The listed site at 1280 px: the launcher in our colour, the hostile
	// CSS kept out and ours kept in, the greeting first and focus in the box.
	run("load", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(listed))
	wait("launcher", `return !!r.querySelector(".launch") && r.host.classList.contains("bottom-right")`)
	wait("look", `return getComputedStyle(r.querySelector(".launch")).backgroundColor === "rgb(15, 118, 110)"`)
	check("host font kept out", `return !getComputedStyle(r.querySelector(".panel")).fontFamily.includes("serif") || getComputedStyle(r.querySelector(".panel")).fontFamily.includes("sans-serif")`)
	check("host CSS untouched", `return getComputedStyle(document.getElementById("hostmsg")).backgroundColor === "rgb(250, 240, 200)"`)
	open()
	check("launcher is a close control", `const l = r.querySelector(".launch"); return l.getAttribute("aria-label") === "Close chat" && l.querySelector("path").getAttribute("d").startsWith("M6.4")`)
	wait("greeting", `const g = r.querySelector(".msg.greeting"); return !!g && g.textContent.includes("Ask me about the Lisbon bakery")`)
	check("focus in the message box", `return r.activeElement && r.activeElement.id === "agentd-input"`)
	check("aria", `return r.querySelector('[role="log"]').getAttribute("aria-live") === "polite" && r.querySelector(".launch").getAttribute("aria-expanded") === "true"`)
	check("placeholder", `return r.querySelector("textarea").placeholder === "Ask about hours, returns…"`)

	typeAndSend("When does the bakery open?")
	wait("answer", `const b = [...r.querySelectorAll(".msg.bot:not(.greeting)")].pop(); return !!b && b.textContent.includes("opens at 7:00") && !!b.querySelector(".cite")`)
	check("citation", `const c = [...r.querySelectorAll(".msg.bot .cite")].pop(); return c.textContent === "Opening hours" && c.title.includes("7:00")`)
	run("shot 1280", shoot(shots, "widget-1280"))

	// A reload keeps the conversation (the visitor token in localStorage).
	run("reload", chromedp.Navigate(listed))
	wait("history", `const m = r.querySelectorAll(".msg.user"); return m.length === 1 && m[0].textContent === "When does the bakery open?" && r.querySelectorAll(".msg.bot .cite").length === 1`)
	open()

	// Knowledge text holding HTML and a javascript: link is shown as text.
	typeAndSend("How do I check my gift card balance?")
	wait("hostile answer", `const b = [...r.querySelectorAll(".msg.bot")].pop(); return b.textContent.includes("Gift card balances")`)
	check("no markup from the answer", `const b = [...r.querySelectorAll(".msg.bot")].pop();
		return b.textContent.includes('<img src=x onerror="window.__xss=1">') && b.textContent.includes("[your balance](javascript:window.__xss=2)") &&
			!r.querySelector("img") && ![...r.querySelectorAll("a")].some(a => !/^https?:/.test(a.href)) && window.__xss === undefined`)
	check("http link kept, opened safely", `const a = [...r.querySelectorAll(".msg.bot a")].find(a => a.href === "https://example.com/terms");
		return !!a && a.rel.includes("noopener") && a.target === "_blank" && a.textContent === "our terms"`)

	// Keyboard: Tab stays in the open panel; Escape closes it and gives
	// the focus back to the launcher.
	run("tabs", chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab))
	check("focus trapped", `return r.querySelector(".panel").contains(r.activeElement)`)
	run("escape", chromedp.KeyEvent(kb.Escape))
	check("closed", `return r.querySelector(".panel").hidden && r.activeElement === r.querySelector(".launch")`)

	// 360 px: the open panel is the whole screen and the launcher covers
	// none of it (bounding boxes); the header's button closes it.
	run("phone", chromedp.EmulateViewport(360, 740))
	open()
	wait("covers the screen", `const b = r.querySelector(".panel").getBoundingClientRect();
		return b.left === 0 && b.top === 0 && b.right === innerWidth && b.bottom === innerHeight && innerWidth === 360`)
	check("launcher clear of the panel", `const p = r.querySelector(".panel").getBoundingClientRect(), l = r.querySelector(".launch").getBoundingClientRect();
		return l.width * l.height === 0 || l.right <= p.left || l.left >= p.right || l.bottom <= p.top || l.top >= p.bottom`)
	check("the agent's name in the header", `return r.querySelector("header h2").textContent === "Baker"`)
	run("shot 360", shoot(shots, "widget-360"))
	run("close on the phone", do(in(`r.querySelector(".close").click(); return true`)))
	check("launcher back", `const l = r.querySelector(".launch").getBoundingClientRect(); return r.querySelector(".panel").hidden && l.width === 56 && l.right <= 360 && l.bottom <= 740`)
	open()

	// New conversation starts over, and the next reload stays fresh.
	run("new", do(in(`r.querySelector(".new").click(); return true`)))
	check("fresh", `return r.querySelectorAll(".msg").length === 1 && !!r.querySelector(".msg.greeting") && !localStorage.getItem("agentd-widget:`+e.agentID+`")`)

	// The same page from an unlisted origin: "unavailable", not a broken
	// page, and one console warning telling the site owner what to check.
	cctx, stopConsole := context.WithCancel(ctx)
	var warnings []string
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range chromedp.Console(cctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleWarning && strings.Contains(m.Text, "agentd widget") {
				warnings = append(warnings, m.Text)
			}
		}
	}()
	run("unlisted", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(unlisted))
	wait("launcher (unlisted)", `return !!r.querySelector(".launch")`)
	open()
	wait("unavailable", `const n = r.querySelector(".note.err"); return !!n && n.textContent.includes("unavailable") && r.querySelector("textarea").disabled`)
	stopConsole()
	<-consoleDone
	if origin := strings.TrimSuffix(unlisted, "/"); len(warnings) != 1 || !strings.Contains(warnings[0], origin) || !strings.Contains(warnings[0], "allowedDomains") {
		t.Fatalf("console warnings on the refused origin %s: %q", origin, warnings)
	}
	check("page intact", `return document.getElementById("hostmsg").textContent === "Fresh bread every morning."`)
	if code, h, b := e.pub("POST", "/api/public/chat/"+e.agentID+"/sessions", strings.TrimSuffix(unlisted, "/"), "", map[string]any{}); code != 403 || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unlisted session: %d %v %s", code, h, b)
	}
	t.Logf("screenshots in %s", shots)
}

// The operator's side in Chromium: the Conversations page filtered to the
// widget channel shows a new widget conversation without a reload; its
// transcript shows the citation; the chat agent's page has the snippet
// with a copy button, a live preview following the form, and says that an
// empty allowedDomains allows no site; another organization's
// conversation is not found.
func TestWidgetDashboardInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	e := newWidgetEnv(t, false, map[string]any{"greeting": "Hello from the bakery"})
	shots := screenshots(t)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	const origin = "http://localhost:8123"
	first := e.widgetSession(e.agentID, origin)
	if code, _, b := e.widgetSay(first, origin, "When does the bakery open?"); code != 200 {
		t.Fatalf("say: %d %s", code, b)
	}
	e.startConversation(e.key, e.agentID) // an API one, filtered out below

	run("setup", chromedp.Navigate(e.setupLink), chromedp.WaitVisible(css("#password")),
		chromedp.SendKeys(css("#password"), "correct horse battery"), chromedp.SendKeys(css("#confirm"), "correct horse battery"),
		chromedp.Submit(css("#password")), chromedp.WaitVisible(css("section.cards")))
	run("list", chromedp.Navigate(e.url+"/conversations?channel=widget"), chromedp.WaitVisible(css(fmt.Sprintf(`tr[data-conversation=%q]`, first.ConversationID))),
		chromedp.WaitVisible(css(`[data-live]:not([hidden])`)))
	if n := get(ctx, t, "rows", chromedp.Evaluate[int](`document.querySelectorAll("tr[data-conversation]").length`)); n != 1 {
		t.Fatalf("%d rows for channel widget, want 1", n)
	}
	second := e.widgetSession(e.agentID, origin)
	run("live row", do(`window.__stayed = true`), chromedp.WaitVisible(css(fmt.Sprintf(`tr[data-conversation=%q]`, second.ConversationID))),
		shoot(shots, "conversations"))
	if !get(ctx, t, "stayed", chromedp.Evaluate[bool](`window.__stayed === true`)) {
		t.Fatal("the conversations page reloaded")
	}
	run("transcript", chromedp.Navigate(e.url+"/conversations/"+first.ConversationID), chromedp.WaitVisible(css("ol.transcript details.citations")))
	if txt := get(ctx, t, "transcript", chromedp.Text(css("ol.transcript"))); !strings.Contains(txt, "When does the bakery open?") || !strings.Contains(txt, "opens at 7:00") {
		t.Fatalf("transcript: %s", txt)
	}

	run("agent page", chromedp.Navigate(e.url+"/agents/"+e.agentID), chromedp.WaitVisible(css("#w-snippet")),
		chromedp.WaitVisible(css(`button[data-copy="w-snippet"]`)))
	snippet := get(ctx, t, "snippet", chromedp.Value(css("#w-snippet")))
	if want := `<script src="` + e.url + `/widget.js" data-agent="` + e.agentID + `" async></script>`; snippet != want {
		t.Fatalf("snippet %q, want %q", snippet, want)
	}
	preview := `document.querySelector("#widget-preview [data-agentd-widget]")?.shadowRoot`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const r = `+preview+`; return !!r && r.querySelector(".msg.greeting")?.textContent === "Hello from the bakery"; })()`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("preview greeting: %v", err)
	}
	run("edit greeting", do(`document.getElementById("a-greeting").value = ""; true`), chromedp.SendKeys(css("#a-greeting"), "Olá!"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => `+preview+`.querySelector(".msg.greeting")?.textContent === "Olá!")()`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("preview does not follow the form: %v", err)
	}
	run("shot agent", shoot(shots, "agent-widget"))
	if html := get(ctx, t, "page", chromedp.OuterHTML(css("main"))); strings.Contains(html, "an empty list allows none") {
		t.Fatal("warning shown for an agent with domains")
	}
	empty := e.createAgent(e.key, map[string]any{"name": "Nowhere", "type": "chat", "config": map[string]any{"allowedDomains": []string{}}})
	run("empty domains", chromedp.Navigate(e.url+"/agents/"+empty), chromedp.WaitVisible(css("#w-snippet")))
	if txt := get(ctx, t, "warning", chromedp.Text(css(".warn"))); !strings.Contains(txt, "an empty list allows none") {
		t.Fatalf("warning: %q", txt)
	}

	// Another organization's conversation is not found from this session.
	_, keyB := e.newOrg("rival")
	other := e.startConversation(keyB, e.createAgent(keyB, map[string]any{"name": "B", "type": "chat"}))
	run("other org", chromedp.Navigate(e.url+"/conversations/"+other))
	if txt := get(ctx, t, "page", chromedp.Text(css("main"))); !strings.Contains(strings.ToLower(txt), "not found") {
		t.Fatalf("another organization's conversation: %q", txt)
	}
}
