package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/storage/agentstore"
	"github.com/agentd/agentd/storage/dashstore"
)

// chromiumPath is the headless browser the dashboard tests drive
// (AGENTD_CHROMIUM overrides), or "" when none is installed.
func chromiumPath() string {
	if p := os.Getenv("AGENTD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startBrowser starts headless Chromium with a throwaway profile and nothing
// that reaches the network on its own.
func startBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no Chromium: CI must install the chromium package")
		}
		t.Skip("no Chromium: install the chromium package to run the dashboard's browser tests")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1366, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	// The first run starts the browser and must have no deadline; the
	// test's actions run under one derived from it.
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	tctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return tctx
}

// screenshots is where the test leaves its pictures of the pages: a temp
// directory, or AGENTD_SCREENSHOTS to keep them (docs/ holds two).
func screenshots(t *testing.T) string {
	if d := os.Getenv("AGENTD_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// shoot saves a full-page PNG of what the browser shows.
func shoot(dir, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}

// css is a CSS selector for the first matching element.
type css = chromedp.CSS

// get runs one action that returns a value.
func get[T any](ctx context.Context, t *testing.T, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// fetchStatus runs fetch in the page and returns the response status.
func fetchStatus(ctx context.Context, t *testing.T, method, path, body string) int {
	t.Helper()
	js := fmt.Sprintf(`fetch(%q, {method: %q, headers: {"Content-Type": "application/x-www-form-urlencoded"}%s}).then(r => r.status)`,
		path, method, map[bool]string{true: fmt.Sprintf(", body: %q", body)}[body != ""])
	return get(ctx, t, "fetch "+method+" "+path, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
}

// The dashboard in a real browser, as an operator uses it: set the owner's
// password through the setup link, create an API key and see it once,
// create a voice agent, watch a sim call reach completed on the calls page
// without a reload, add a knowledge source and find it in the playground,
// and sign out. Then a viewer sees no actions and a forged POST with their
// cookie is refused; a cross-site form carrying the owner's cookie is
// refused; /v1 with only the cookie is 401.
func TestDashboardInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	e := newTestEnv(t, fastSim(2500*time.Millisecond))
	shots := screenshots(t)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	location := func() string { return strings.Split(get(ctx, t, "location", chromedp.Location()), "?")[0] }

	// Sign in through the setup link.
	run("setup", chromedp.Navigate(e.setupLink), chromedp.WaitVisible(css("#password")),
		chromedp.SendKeys(css("#password"), "correct horse battery"), chromedp.SendKeys(css("#confirm"), "correct horse battery"),
		chromedp.Submit(css("#password")), chromedp.WaitVisible(css("section.cards")))
	if loc := location(); loc != e.url+"/" {
		t.Fatalf("after setup at %s", loc)
	}

	// Create a key: shown once, with a copy button.
	run("create key", chromedp.Navigate(e.url+"/keys"), chromedp.WaitVisible(css("#k-name")),
		chromedp.SendKeys(css("#k-name"), "browser"), chromedp.Submit(css("#k-name")),
		chromedp.WaitVisible(css("[data-new-key]")), chromedp.WaitVisible(css(`button[data-copy="new-key"]`)), shoot(shots, "keys"))
	key := get(ctx, t, "key", chromedp.Value(css("[data-new-key]")))
	if !access.WellFormedKey(key) {
		t.Fatalf("shown key %q", key)
	}
	run("keys again", chromedp.Navigate(e.url+"/keys"), chromedp.WaitVisible(css("table.list")))
	if again := get(ctx, t, "keys html", chromedp.OuterHTML(css("html"))); strings.Contains(again, key) || !strings.Contains(again, key[:10]) {
		t.Fatal("the key list shows the secret again, or not its prefix")
	}

	// Create a voice agent.
	run("create agent", chromedp.Navigate(e.url+"/agents/new"), chromedp.WaitVisible(css("#a-name")),
		chromedp.SendKeys(css("#a-name"), "Ava"), chromedp.SendKeys(css("#a-phones"), "+15550001111"),
		chromedp.SendKeys(css("#a-voice"), "alloy"), chromedp.SendKeys(css("#a-instructions"), "Confirm the appointment."),
		chromedp.Submit(css("#a-name")), chromedp.WaitVisible(css("#jobs")))
	agentID := strings.TrimPrefix(location(), e.url+"/agents/")
	if a, err := e.db.Agents.GetAgent(context.Background(), e.orgID, agentID); err != nil || a.Type != "voice" || a.Name != "Ava" {
		t.Fatalf("agent %s: %+v %v", agentID, a, err)
	}

	// A sim call placed with the new key reaches completed on the calls
	// page while it stays open: the page's marker survives, so no reload.
	callID := e.outbound(key, agentID, "+14155550123")
	row := fmt.Sprintf(`tr[data-call=%q]`, callID)
	run("watch call", chromedp.Navigate(e.url+"/calls"), chromedp.WaitVisible(css(row)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.__stayed = true`)(ctx, tg)
			return err
		}),
		chromedp.WaitVisible(css(`[data-live]:not([hidden])`)),
		chromedp.WaitVisible(css(row+` [data-field="status"] .st-completed`)), shoot(shots, "calls"))
	if !get(ctx, t, "marker", chromedp.Evaluate[bool](`window.__stayed === true`)) {
		t.Fatal("the calls page reloaded to show the status")
	}
	if live := get(ctx, t, "live badge", chromedp.Text(css("[data-live]"))); live != "live" {
		t.Fatalf("live badge says %q", live)
	}
	at := time.Now().UTC().Format(time.RFC3339)
	if code := e.doJSON("POST", "/api/v1/calls/"+callID+"/result", key, map[string]any{
		"summary": "Confirmed the appointment for Tuesday at 10:00; the customer asked for a reminder text.",
		"outcome": "appointment_confirmed",
		"transcript": []map[string]string{
			{"role": "agent", "text": "Hi, this is Ava from the clinic. I'm calling to confirm your appointment on Tuesday at 10.", "at": at},
			{"role": "user", "text": "Yes, that works. Could you text me a reminder?", "at": at},
			{"role": "agent", "text": "Of course. You'll get a reminder the day before. Goodbye!", "at": at},
		}}, nil); code != 200 {
		t.Fatalf("call result: %d", code)
	}
	run("call detail", chromedp.Navigate(e.url+"/calls/"+callID), chromedp.WaitVisible(css("ol.transcript")),
		chromedp.WaitVisible(css("ol.timeline")), shoot(shots, "call-detail"))

	// Add a Markdown source and find it in the playground.
	run("collection", chromedp.Navigate(e.url+"/knowledge"), chromedp.WaitVisible(css("#c-name")),
		chromedp.SendKeys(css("#c-name"), "Help center"), chromedp.Submit(css("#c-name")), chromedp.WaitVisible(css("#s-content")))
	colURL := location()
	run("source", chromedp.SendKeys(css("#s-ext"), "returns"), chromedp.SendKeys(css("#s-title"), "Returns policy"),
		chromedp.SetValue(css("#s-content"), "# Returns\n\n## Refund window\n\nParcels may be returned within thirty days for a full refund.\n\n## Damaged items\n\nSend a photo and we replace the item at no cost.\n"),
		chromedp.Submit(css("#s-content")), chromedp.WaitVisible(css("td code")))
	testkit.Eventually(t, 30*time.Second, func() bool {
		run("source status", chromedp.Navigate(colURL), chromedp.WaitVisible(css("table.list")))
		return get(ctx, t, "status", chromedp.Evaluate[bool](`!!document.querySelector("td .st-completed")`))
	}, "the source was not processed")
	// The collection page with its drop zone and web form, on a desktop
	// and on a phone (nothing wider than the screen).
	run("collection page", chromedp.Navigate(colURL), chromedp.WaitVisible(css("table.list")), shoot(shots, "collection"),
		chromedp.EmulateViewport(360, 780), chromedp.Navigate(colURL), chromedp.WaitVisible(css("table.list")), shoot(shots, "collection-360"))
	if w := get(ctx, t, "page width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 360 {
		t.Errorf("the collection page is %d px wide on a 360 px phone", w)
	}
	run("desktop again", chromedp.EmulateViewport(1366, 900))
	run("playground", chromedp.Navigate(colURL+"/search"), chromedp.WaitVisible(css("#q")),
		chromedp.SendKeys(css("#q"), "how long do I have for a refund"), chromedp.Submit(css("#q")),
		chromedp.WaitVisible(css("ol.results .result-head")), shoot(shots, "search"))
	if hits := get(ctx, t, "hits", chromedp.Text(css("ol.results"))); !strings.Contains(hits, "Returns policy") || !strings.Contains(hits, "score") {
		t.Fatalf("playground shows %q", hits)
	}

	// A week of history for the overview and the batches.
	if err := e.db.Dashboard.SeedHistory(context.Background(), dashstore.WeekOfCalls(e.orgID, agentID, 4000, time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	run("overview", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(css("svg.chart")), shoot(shots, "overview"))
	run("batches", chromedp.Navigate(e.url+"/batches"), chromedp.WaitVisible(css("progress")), shoot(shots, "batches"))
	run("agent page", chromedp.Navigate(e.url+"/agents/"+agentID), chromedp.WaitVisible(css("#a-name")), shoot(shots, "agent"))
	e.sync(key, false,
		listing("sofa-1", "Red velvet sofa", "category", "furniture", "price", 499, "attributes", map[string]any{"color": "red", "seats": 3}),
		listing("sofa-2", "Grey corner sofa", "category", "furniture", "price", 899, "attributes", map[string]any{"color": "grey", "seats": 5}),
		listing("lamp-1", "Brass floor lamp", "category", "lighting", "price", 129.5, "attributes", map[string]any{"color": "gold"}))
	run("listings", chromedp.Navigate(e.url+"/listings?category=furniture&q=sofa&attrs=color%3Dred"), chromedp.WaitVisible(css("table.list")))
	if rows := get(ctx, t, "listings", chromedp.Text(css("table.list tbody"))); !strings.Contains(rows, "Red velvet sofa") || strings.Contains(rows, "Grey") {
		t.Fatalf("listings filtered by color: %q", rows)
	}
	run("members", chromedp.Navigate(e.url+"/listings"), chromedp.WaitVisible(css("table.list")), shoot(shots, "listings"),
		chromedp.Navigate(e.url+"/members"), chromedp.WaitVisible(css("table.list")), shoot(shots, "members"))

	// /v1 never takes the session cookie.
	if st := fetchStatus(ctx, t, "GET", "/api/v1/agents", ""); st != 401 {
		t.Fatalf("/v1 with only the cookie: %d", st)
	}
	// A form on another origin (same site: another port) posting with the
	// owner's cookie is refused and creates nothing.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/agents"><input name="name" value="Evil">
			<input name="type" value="voice"><input name="status" value="active"><button id="go">go</button></form>`, e.url)
	}))
	defer evil.Close()
	run("cross-site form", chromedp.Navigate(evil.URL), chromedp.WaitVisible(css("#go")), chromedp.Click(css("#go")),
		chromedp.WaitVisible(css("main h1")))
	if h1 := get(ctx, t, "refusal", chromedp.Text(css("main h1"))); h1 != "Forbidden" {
		t.Fatalf("cross-site form answered %q", h1)
	}
	if as, _, _ := e.db.Agents.ListAgents(context.Background(), e.orgID, agentstore.AgentFilter{Limit: 10}); len(as) != 1 {
		t.Fatalf("%d agents after the cross-site form", len(as))
	}

	// Sign out; the pages send us to sign in.
	run("sign out", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(css("header form button")),
		chromedp.Click(css(`header form button[type="submit"]`)), chromedp.WaitVisible(css("#email")),
		chromedp.Navigate(e.url+"/calls"), chromedp.WaitVisible(css("#email")))
	if loc := location(); loc != e.url+"/login" {
		t.Fatalf("signed out, /calls is at %s", loc)
	}

	// A viewer signs in with the form, sees no create buttons, and a forged
	// POST with their cookie and their own CSRF token is refused.
	u, err := features.NewAccess(e.db).AddMember(context.Background(), access.Actor{Role: "owner"}, e.orgID, "viewer@example.com", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	if err := features.NewAccess(e.db).SetPassword(context.Background(), u.ID, "viewer password"); err != nil {
		t.Fatal(err)
	}
	run("viewer", chromedp.SendKeys(css("#email"), "viewer@example.com"), chromedp.SendKeys(css("#password"), "viewer password"),
		chromedp.Submit(css("#email")), chromedp.WaitVisible(css("#f-status")), chromedp.Navigate(e.url+"/agents"),
		chromedp.WaitVisible(css("table.list")))
	agentsHTML := get(ctx, t, "agents", chromedp.OuterHTML(css("main")))
	nav := get(ctx, t, "nav", chromedp.OuterHTML(css("header")))
	csrf := get(ctx, t, "csrf", chromedp.Value(css(`header input[name="csrf"]`)))
	run("viewer kb", chromedp.Navigate(e.url+"/knowledge"), chromedp.WaitVisible(css("table.list")))
	kbHTML := get(ctx, t, "kb", chromedp.OuterHTML(css("main")))
	if strings.Contains(agentsHTML, "New agent") || strings.Contains(kbHTML, "Create collection") || strings.Contains(nav, "API keys") {
		t.Fatal("the viewer sees actions their role lacks")
	}
	if st := fetchStatus(ctx, t, "POST", "/agents", "csrf="+csrf+"&name=Forged&type=voice&status=active"); st != 403 {
		t.Fatalf("viewer's forged POST: %d", st)
	}
	if st := fetchStatus(ctx, t, "POST", "/knowledge", "csrf="+csrf+"&name=Forged"); st != 403 {
		t.Fatalf("viewer's forged collection: %d", st)
	}
	t.Logf("screenshots in %s", shots)
}
