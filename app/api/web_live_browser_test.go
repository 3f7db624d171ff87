package api

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/app/features"
	"github.com/agentd/agentd/internal/testkit"
	"github.com/agentd/agentd/storage/callstore"
)

// signInBrowser sets the owner's password through the setup link.
func signInBrowser(t *testing.T, ctx context.Context, e *testEnv) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(e.setupLink), chromedp.WaitVisible(css("#password")),
		chromedp.SendKeys(css("#password"), "correct horse battery"), chromedp.SendKeys(css("#confirm"), "correct horse battery"),
		chromedp.Submit(css("#password")), chromedp.WaitVisible(css("section.cards"))); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// openTab opens path in a new tab of the browser (see openTabIn).
func openTab(t *testing.T, ctx context.Context, e *testEnv, path, sel, badge string) context.Context {
	t.Helper()
	tab, _ := chromedp.NewContext(ctx)
	return openTabIn(t, tab, e, path, sel, badge)
}

// waitJS polls a JavaScript condition in the tab until it holds.
func waitJS(t *testing.T, tab context.Context, what string, timeout time.Duration, js string) {
	t.Helper()
	if !pollJS(tab, timeout, js) {
		_, err := chromedp.Run(tab, chromedp.Evaluate[bool](js))
		html, _ := chromedp.Run(tab, chromedp.OuterHTML(css("main")))
		t.Fatalf("%s: not after %s (%v): %.3000s", what, timeout, err, html)
	}
}

// pollJS polls a JavaScript condition in the tab until it holds or the
// time is up.
func pollJS(tab context.Context, timeout time.Duration, js string) bool {
	return testkit.Within(timeout, func() bool {
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](js))
		return err == nil && ok
	})
}

// stayed says the tab's marker survived: the page was never reloaded.
func stayed(t *testing.T, tab context.Context, what string) {
	t.Helper()
	if !get(tab, t, what+" marker", chromedp.Evaluate[bool](`window.__stayed === true`)) {
		t.Fatalf("%s reloaded", what)
	}
}

// A 50-call batch on the sim dialer, watched from the calls list, the
// Overview and Batches open side by side: rows arrive at the top of the
// list, the counters and the batch's progress move, and no page reloads.
// A viewer, who has no events:read, sees the same pages refresh on a timer.
func TestLiveCampaignInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	// The default lease: under the race detector on two busy cores a 2 s
	// lease can lapse and send a call round again, which is not what this
	// test watches.
	e := newTestEnv(t, fastSim(800*time.Millisecond), func(c *serveConfig) { c.Calls.Lease = 30 * time.Second })
	shots := screenshots(t)
	signInBrowser(t, ctx, e)
	agent := e.voiceAgent(e.orgID)

	callsTab := openTab(t, ctx, e, "/calls", "table.list", "live")
	overviewTab := openTab(t, ctx, e, "/", "section.cards", "live")
	batchesTab := openTab(t, ctx, e, "/batches", "table.list", "live")
	bigToday := `Number(document.querySelector('[data-live-region="today"] .big').textContent)`
	if n := get(overviewTab, t, "calls today", chromedp.Evaluate[int](bigToday)); n != 0 {
		t.Fatalf("calls today before the batch: %d", n)
	}

	id := e.postBatch(e.key, agent.ID, "Spring promo", 50, nil)
	waitJS(t, callsTab, "50 rows", 30*time.Second, `document.querySelectorAll("tr[data-call]").length === 50`)
	waitJS(t, overviewTab, "counter moves", 30*time.Second, bigToday+` > 0`)
	waitJS(t, batchesTab, "batch row", 30*time.Second, fmt.Sprintf(`(document.querySelector('a[href="/batches/%s"]') || {}).textContent === "Spring promo"`, id))
	waitJS(t, batchesTab, "batch done", 30*time.Second, `(document.querySelector("progress") || {}).value === 50`)
	waitJS(t, overviewTab, "all 50 counted", 30*time.Second, bigToday+` === 50`)
	rowsShow := `Array.from(document.querySelectorAll('tr[data-call] [data-field="status"]')).map((c) => c.textContent.trim()).sort().join(",")`
	if !pollJS(callsTab, 30*time.Second, `document.querySelectorAll('tr[data-call] [data-field="status"] .st-completed').length === 50`) {
		t.Fatalf("all completed: not after 30 s; the list shows %s; the API says %s",
			get(callsTab, t, "statuses", chromedp.Evaluate[string](rowsShow)), e.batchStatuses(id))
	}
	for _, tab := range []struct {
		ctx  context.Context
		name string
	}{{callsTab, "calls"}, {overviewTab, "overview"}, {batchesTab, "batches"}} {
		stayed(t, tab.ctx, tab.name)
		if err := chromedp.Do(tab.ctx, shoot(shots, "live-"+tab.name)); err != nil {
			t.Fatal(err)
		}
	}
	if empty := get(callsTab, t, "empty row", chromedp.Evaluate[bool](`!!document.querySelector("td.empty")`)); empty {
		t.Fatal("the calls list still says it has no calls")
	}
	// Rows the live script drew carry the labels a phone's cards show.
	labelled := `Array.from(document.querySelectorAll("[data-live-calls] tr[data-call].arrived td[data-field]")).every((c) => !!c.dataset.label)`
	if !get(callsTab, t, "labels", chromedp.Evaluate[bool](labelled)) {
		t.Error("/calls: a row drawn live has a cell without its label")
	}

	// The campaign page on a phone, live: rows it lacks (here, the first
	// five, taken out) are drawn again by the script when the next call
	// event comes, as cards with their labels, the first status on screen.
	campTab, _ := chromedp.NewContext(ctx)
	if err := chromedp.Do(campTab, chromedp.EmulateViewport(360, 800)); err != nil {
		t.Fatal(err)
	}
	openTabIn(t, campTab, e, "/batches/"+id, "table[data-live-calls]", "live")
	campRows := `document.querySelectorAll("[data-live-calls] tr[data-call]").length`
	if n := get(campTab, t, "rows left", chromedp.Evaluate[int](`document.querySelectorAll("[data-live-calls] tr[data-call]").forEach((r, i) => { if (i < 5) r.remove() }), `+campRows)); n != 45 {
		t.Fatalf("campaign page: %d rows after taking five out", n)
	}
	e.outbound(e.key, agent.ID, "+14155550777")
	waitJS(t, campTab, "rows drawn again", 30*time.Second, campRows+` === 50 && document.querySelectorAll("[data-live-calls] tr.arrived").length === 5`)
	if !get(campTab, t, "labels", chromedp.Evaluate[bool](labelled)) {
		t.Error("campaign page: a row drawn live has a cell without its label")
	}
	if !get(campTab, t, "status on a phone", chromedp.Evaluate[bool](statusSeen)) {
		chromedp.Do(campTab, shoot(shots, "hidden-status-live-campaign-360"))
		t.Error("campaign page at 360 px: the first call's status, drawn live, is off the screen")
	}
	tablesFit(t, campTab, shots, "live-campaign-360")
	stayed(t, campTab, "campaign")
	if err := chromedp.Do(campTab, shoot(shots, "live-campaign-360")); err != nil {
		t.Fatal(err)
	}
	// The event log on a phone, following call.ended: the row its script
	// draws is a card with labels too. (In this tab: opened in a fifth tab
	// beside four other live pages, its stream said live but drew nothing
	// in 30 s; not yet understood.)
	logTab := openTabIn(t, campTab, e, "/events?type=call.ended", "table[data-event-log]", "live")
	e.outbound(e.key, agent.ID, "+14155550778")
	waitJS(t, logTab, "an event drawn live", 30*time.Second, `document.querySelectorAll("[data-event-log] tr.arrived").length === 1`)
	if !get(logTab, t, "labels", chromedp.Evaluate[bool](`Array.from(document.querySelectorAll("[data-event-log] tr.arrived td")).filter((c) => c.dataset.label).map((c) => c.dataset.label).join() === "Type,Data"`)) {
		t.Error("event log: the row drawn live lacks its Type and Data labels")
	}
	tablesFit(t, logTab, shots, "live-events-360")
	stayed(t, logTab, "event log")

	// Every page, at a laptop's width and a phone's, is exactly as wide
	// as the viewport: nothing overflows sideways.
	hookURL := "https://hooks.example.com/a"
	wh, err := events.New(events.Deps{Webhooks: e.db.Webhooks, Events: e.db.Events}, nil).Create(context.Background(), e.orgID, events.Input{URL: &hookURL, Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	callID := get(callsTab, t, "a call id", chromedp.Evaluate[string](`document.querySelector("tr[data-call]").dataset.call`))
	// A row in every list, so that a table too wide for a phone shows.
	col := e.createCollection(e.key, "Opening hours and returns policy of the Lisbon bakery")
	if code, out := upsert(e, e.key, map[string]any{"collectionId": col, "externalId": "hours-and-returns-policy-2026",
		"title": "Opening hours, Sundays and holidays", "content": "The bakery opens at 7:00."}); code != 200 {
		t.Fatalf("upsert: %d %v", code, out)
	}
	e.sync(e.key, false, listing("flat-lisbon-alfama-0042", "Two-bedroom flat in Alfama with a river view"))
	if code := e.doJSON("POST", "/api/v1/dnc", e.key, map[string]any{"numbers": []string{"+14155550999"}, "reason": "asked not to be called again"}, nil); code != 200 {
		t.Fatalf("dnc: %d", code)
	}
	chat := e.createAgent(e.key, map[string]any{"name": "Bakery assistant", "type": "chat", "instructions": "Be brief."})
	e.startConversation(e.key, chat)
	pages := []string{"/", "/calls", "/calls/" + callID, "/calls/new", "/batches", "/batches/" + id, "/batches/new",
		"/agents", "/agents/new", "/agents/" + agent.ID, "/knowledge", "/knowledge/" + col, "/listings", "/keys", "/members", "/webhooks",
		"/webhooks/" + wh.ID, "/events", "/dnc", "/settings", "/conversations"}
	for _, width := range []int64{1280, 360} {
		for _, path := range pages {
			name := fmt.Sprintf("%d%s", width, strings.ReplaceAll(path, "/", "-"))
			for _, id := range []string{callID, id, agent.ID, wh.ID, col} {
				name = strings.ReplaceAll(name, id, "id")
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 800), chromedp.Navigate(e.url+path),
				chromedp.WaitVisible(css("main h1"))); err != nil {
				t.Fatalf("%s at %d px: %v", path, width, err)
			}
			if h1 := get(ctx, t, "h1", chromedp.Text(css("main h1"))); strings.Contains(h1, "Not found") || strings.Contains(h1, "Forbidden") {
				t.Fatalf("%s: %s", path, h1)
			}
			sizes := get(ctx, t, "widths", chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
			if sizes[0] != sizes[1] {
				chromedp.Do(ctx, shoot(shots, "overflow-"+name))
				t.Errorf("%s at %d px: the page is %d px wide in a %d px viewport", path, width, sizes[0], sizes[1])
			}
			if width == 360 && (path == "/calls" || path == "/batches/"+id) {
				// On a phone each call is a card: its status shows without
				// scrolling the list sideways.
				seen := get(ctx, t, "status on a phone", chromedp.Evaluate[bool](statusSeen))
				if !seen {
					chromedp.Do(ctx, shoot(shots, "hidden-status-"+name))
					t.Errorf("%s at 360 px: the first call's status is off the screen", path)
				}
			}
			if width == 360 {
				tablesFit(t, ctx, shots, name)
			}
			if path == "/batches/"+id {
				// The campaign's attempts chart is drawn and fits the screen.
				fits := get(ctx, t, "chart", chromedp.Evaluate[bool](`(() => { const c = document.querySelector("svg[aria-labelledby^='attempts-chart']");
					return !!c && c.getBoundingClientRect().width > 0 && c.getBoundingClientRect().right <= window.innerWidth &&
						/^[1-9][0-9]* dial attempts/.test(document.getElementById("attempts-chart-desc").textContent) })()`))
				if !fits {
					t.Errorf("campaign page at %d px: no attempts chart, or it does not fit", width)
				}
			}
			if err := chromedp.Do(ctx, shoot(shots, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The new campaign's dry run lists every number with its problem.
	for _, width := range []int64{1280, 360} {
		name := fmt.Sprintf("%d-batches-new-dry-run", width)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 800), chromedp.Navigate(e.url+"/batches/new"),
			chromedp.WaitVisible(css("#b-numbers")),
			chromedp.SetValue(css("#b-numbers"), "+14155550100, Ana Lisboa\n+14155550999, Listed Number\n12, Too Short\n+14155550101"),
			chromedp.Click(css("#b-dry")), chromedp.WaitVisible(css("table[data-dry-run] tbody tr"))); err != nil {
			t.Fatalf("dry run at %d px: %v", width, err)
		}
		if n := get(ctx, t, "dry-run rows", chromedp.Evaluate[int](`document.querySelectorAll("table[data-dry-run] tbody tr").length`)); n != 4 {
			t.Errorf("dry run at %d px: %d rows, want 4", width, n)
		}
		if width == 360 {
			tablesFit(t, ctx, shots, name)
		}
		if err := chromedp.Do(ctx, shoot(shots, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatal(err)
	}

	// A viewer cannot open the event stream: the page says auto-refresh
	// and a second batch still shows up on their Overview.
	u, err := features.NewAccess(e.db).AddMember(context.Background(), access.Actor{Role: "owner"}, e.orgID, "viewer@example.com", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	if err := features.NewAccess(e.db).SetPassword(context.Background(), u.ID, "viewer password"); err != nil {
		t.Fatal(err)
	}
	viewer, _ := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(viewer, chromedp.Navigate(e.url+"/login"), chromedp.WaitVisible(css("#email")),
		chromedp.SendKeys(css("#email"), "viewer@example.com"), chromedp.SendKeys(css("#password"), "viewer password"),
		chromedp.Submit(css("#email")), chromedp.WaitVisible(css("section.cards"))); err != nil {
		t.Fatalf("viewer sign-in: %v", err)
	}
	viewerTab := openTabIn(t, viewer, e, "/", "section.cards", "auto-refresh")
	e.postBatch(e.key, agent.ID, "Second wave", 5, nil)
	waitJS(t, viewerTab, "viewer's counter", 30*time.Second, bigToday+` === 57`) // with the two calls above
	stayed(t, viewerTab, "viewer's overview")
	t.Logf("screenshots in %s", shots)
}

// statusSeen says the first call's status is on the screen.
const statusSeen = `(() => { const c = document.querySelector("tr[data-call] td[data-field=status]");
	const b = c.getBoundingClientRect(); return b.width > 0 && b.left >= 0 && b.right <= window.innerWidth })()`

// tablesFit checks that no table of the page, nor the box around one,
// scrolls sideways: on a phone a wide list is cards, not a strip to pan.
func tablesFit(t *testing.T, ctx context.Context, shots, name string) {
	t.Helper()
	wide := get(ctx, t, "wide tables", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("main table, main .scroll"))
		.filter((b) => b.scrollWidth > b.clientWidth + 1)
		.map((b) => b.tagName.toLowerCase() + "." + b.className.replace(/ /g, ".") + (b.dataset.liveCalls !== undefined ? "[data-live-calls]" : "") +
			": " + b.scrollWidth + " px in " + b.clientWidth)`))
	if len(wide) > 0 {
		chromedp.Do(ctx, shoot(shots, "wide-table-"+name))
		t.Errorf("%s: tables scroll sideways: %s", name, strings.Join(wide, "; "))
	}
}

// openTabIn opens path in the tab, waits for sel and for the live badge
// to say badge, and sets a marker that a reload would lose.
func openTabIn(t *testing.T, tab context.Context, e *testEnv, path, sel, badge string) context.Context {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Navigate(e.url+path), chromedp.WaitVisible(css(sel)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.__stayed = true`)(ctx, tg)
			return err
		})); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	waitJS(t, tab, path+" badge", 10*time.Second, fmt.Sprintf(`(document.querySelector("[data-live]") || {}).textContent === %q`, badge))
	return tab
}

// batchStatuses is how many calls of the batch the API has in each status.
func (e *testEnv) batchStatuses(id string) string {
	e.t.Helper()
	var list struct{ Data struct{ Calls []callView } }
	if code := e.doJSON("GET", "/api/v1/calls?batchId="+id+"&limit=100", e.key, nil, &list); code != 200 {
		return fmt.Sprintf("(list answered %d)", code)
	}
	n := map[string]int{}
	for _, c := range list.Data.Calls {
		n[c.Status]++
	}
	return fmt.Sprint(n)
}

// The call page of a call agentd's voice loop talks on shows each
// transcript line as it is heard (call.transcript on the event stream),
// the cut-off one marked, without a reload.
func TestLiveCallTranscriptInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	e := newTestEnv(t, fastSim(time.Minute))
	signInBrowser(t, ctx, e)
	agent := e.voiceAgent(e.orgID)
	id := e.outbound(e.key, agent.ID, "+14155550100")
	tab := openTab(t, ctx, e, "/calls/"+id, "[data-call-detail]", "live")
	lines := `Array.from(document.querySelectorAll("ol.transcript li p")).map((p) => p.textContent.trim()).join("|")`
	for i, l := range []callstore.TranscriptLine{
		{Role: "agent", Text: "Hello, this is Ada from the bakery.", At: time.Now(), Interrupted: true},
		{Role: "user", Text: "I would like a cake.", At: time.Now()},
	} {
		if err := e.db.Calls.AppendLiveTranscript(context.Background(), e.orgID, agent.ID, id, []callstore.TranscriptLine{l}); err != nil {
			t.Fatal(err)
		}
		want := []string{"Hello, this is Ada from the bakery. (cut off)", "Hello, this is Ada from the bakery. (cut off)|I would like a cake."}[i]
		waitJS(t, tab, "line "+fmt.Sprint(i+1), 15*time.Second, lines+` === `+fmt.Sprintf("%q", want))
	}
	stayed(t, tab, "call page")
}
