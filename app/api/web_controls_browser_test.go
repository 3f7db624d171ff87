package api

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentd/agentd/app/events"
	"github.com/agentd/agentd/internal/testkit"
)

// fixedResolver resolves every host to one address.
type fixedResolver []netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

// clickThrough clicks sel in the page (accepting any confirm dialog) and
// waits until a new page has loaded on which the JavaScript cond holds: the
// old page's marker is gone, so a check never passes on the page clicked.
func clickThrough(t *testing.T, ctx context.Context, what, sel, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__before = true; window.confirm = () => true; true`)); err != nil {
		t.Fatalf("%s: mark page: %v", what, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(css(sel))); err != nil {
		t.Fatalf("%s: click %s: %v", what, sel, err)
	}
	waitJS(t, ctx, what, 15*time.Second, `window.__before === undefined && document.readyState === "complete" && (`+cond+`)`)
}

// jsText is a JavaScript expression for the text of the first match of sel, or "".
func jsText(sel string) string {
	return fmt.Sprintf(`((document.querySelector(%q) || {}).textContent || "")`, sel)
}

// apiField reads one field of a JSON object from the API, inside "data"
// when the response wraps it.
func apiField(t *testing.T, e *testEnv, path, field string) any {
	t.Helper()
	var out map[string]any
	if code := e.doJSON("GET", path, e.key, nil, &out); code != 200 {
		t.Fatalf("GET %s: %d %v", path, code, out)
	}
	if d, ok := out["data"].(map[string]any); ok {
		return d[field]
	}
	return out[field]
}

// Every control the console added, clicked in real Chromium by the owner:
// a webhook is created (its secret shown once), rotated and disabled; a
// number is added to the do-not-call list, found and removed; a campaign
// from pasted numbers is dry-run, started on the sim dialer, paused and
// resumed; one call is placed from its form; calling hours are saved and
// still there after a reload. Each step checks what the page shows next,
// and where cheap what the API says, so a broken control fails the test.
func TestConsoleControlsInBrowser(t *testing.T) {
	ctx := startBrowser(t)
	// Long sim calls keep the campaign running while it is paused and resumed.
	// The receiver's host resolves to a public address through a fixed
	// resolver, and no delivery worker runs: nothing leaves the machine.
	e := newTestEnv(t, fastSim(15*time.Second), func(c *serveConfig) {
		c.Webhooks = events.Config{Disabled: true, Resolver: fixedResolver{netip.MustParseAddr("93.184.215.14")}}
	})
	shots := screenshots(t)
	signInBrowser(t, ctx, e)
	agent := e.voiceAgent(e.orgID)
	run := func(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	location := func(t *testing.T) string {
		return strings.Split(get(ctx, t, "location", chromedp.Location()), "?")[0]
	}
	notice := jsText("main p.notice")

	t.Run("webhook", func(t *testing.T) {
		run(t, "webhooks page", chromedp.Navigate(e.url+"/webhooks"), chromedp.WaitVisible(css("#wh-url")),
			chromedp.SendKeys(css("#wh-url"), "https://hooks.example.com/x"), chromedp.SendKeys(css("#wh-desc"), "browser"),
			chromedp.Click(css(`input[name="events"][value="*"]`)))
		clickThrough(t, ctx, "create webhook", `form[action="/webhooks"] button[type="submit"]`, `!!document.querySelector("[data-new-secret]")`)
		secret := get(ctx, t, "secret", chromedp.Value(css("[data-new-secret]")))
		if len(secret) < 16 {
			t.Fatalf("shown secret %q", secret)
		}
		link := get(ctx, t, "webhook link", chromedp.Evaluate[string](`(document.querySelector('table[data-webhooks] a[href^="/webhooks/"]') || {}).getAttribute("href") || ""`))
		if link == "" {
			t.Fatal("the new webhook is not listed")
		}
		run(t, "webhook page", chromedp.Navigate(e.url+link), chromedp.WaitVisible(css("h1")), shoot(shots, "controls-webhook"))
		if html := get(ctx, t, "webhook html", chromedp.OuterHTML(css("html"))); strings.Contains(html, secret) {
			t.Fatal("the webhook page shows the secret again")
		}

		clickThrough(t, ctx, "rotate", `form[action$="/rotate"] button`, `!!document.querySelector("[data-new-secret]")`)
		rotated := get(ctx, t, "rotated secret", chromedp.Value(css("[data-new-secret]")))
		if len(rotated) < 16 || rotated == secret {
			t.Fatalf("rotation shows %q (was %q)", rotated, secret)
		}
		if hint := get(ctx, t, "hint", chromedp.Evaluate[string](jsText("main p.hint"))); !strings.Contains(hint, "previous secret signs until") {
			t.Fatalf("after rotation the page says %q", hint)
		}

		clickThrough(t, ctx, "disable", `form[action$="/enabled"] button`, notice+`.startsWith("Webhook disabled")`)
		if badge := get(ctx, t, "badge", chromedp.Text(css("h1 .badge"))); badge != "disabled" {
			t.Fatalf("after disabling the badge says %q", badge)
		}
		if on := apiField(t, e, "/api/v2"+link, "enabled"); on != false {
			t.Fatalf("the API says enabled=%v", on)
		}
	})

	t.Run("dnc", func(t *testing.T) {
		const number = "+14155550999"
		run(t, "dnc page", chromedp.Navigate(e.url+"/dnc"), chromedp.WaitVisible(css("#d-add")),
			chromedp.SendKeys(css("#d-add"), number), chromedp.SendKeys(css("#d-reason"), "asked in the browser test"))
		clickThrough(t, ctx, "add", `form[action="/dnc"][method="post"] button[type="submit"]`, notice+` === "1 added, 0 already listed; 0 waiting calls failed"`)

		run(t, "search", chromedp.SendKeys(css("#d-q"), number))
		clickThrough(t, ctx, "search", `form[action="/dnc"][method="get"] button[type="submit"]`,
			`document.querySelectorAll("table[data-dnc] tbody tr").length === 1 && `+jsText("table[data-dnc] tbody td")+` === "`+number+`"`)
		if !strings.Contains(get(ctx, t, "search url", chromedp.Location()), "q=") {
			t.Fatal("the search did not go through the form")
		}
		run(t, "shot", shoot(shots, "controls-dnc"))

		clickThrough(t, ctx, "remove", `table[data-dnc] form[action="/dnc/remove"] button`, notice+` === "1 removed, 0 were not listed"`)
		run(t, "search again", chromedp.SendKeys(css("#d-q"), number))
		clickThrough(t, ctx, "search again", `form[action="/dnc"][method="get"] button[type="submit"]`,
			jsText("table[data-dnc] td.empty")+` === "`+number+` is not on the list."`)
		var out map[string]any
		if code := e.doJSON("GET", "/api/v1/dnc?q=%2B14155550999", e.key, nil, &out); code != 200 || strings.Contains(fmt.Sprint(out), number) {
			t.Fatalf("the API still lists the number: %d %v", code, out)
		}
	})

	t.Run("campaign", func(t *testing.T) {
		var numbers []string
		for i := range 30 {
			numbers = append(numbers, fmt.Sprintf("+1415555%04d, Contact %d", 200+i, i))
		}
		run(t, "new campaign", chromedp.Navigate(e.url+"/batches/new"), chromedp.WaitVisible(css("#b-numbers")),
			chromedp.SendKeys(css("#b-name"), "Browser campaign"), chromedp.SetValue(css("#b-numbers"), strings.Join(numbers, "\n")))
		clickThrough(t, ctx, "dry run", "#b-dry", jsText("h2#dry")+` === "Dry run: 30 of 30 would be called"`)
		if rows := get(ctx, t, "dry rows", chromedp.Evaluate[int](`document.querySelectorAll("table[data-dry-run] tbody tr").length`)); rows != 30 {
			t.Fatalf("the dry run lists %d rows", rows)
		}
		run(t, "shot", shoot(shots, "controls-dry-run"))
		var list map[string]any
		if code := e.doJSON("GET", "/api/v1/calls/batches", e.key, nil, &list); code != 200 || strings.Contains(fmt.Sprint(list), "Browser campaign") {
			t.Fatalf("the dry run created a batch: %d %v", code, list)
		}

		// The form keeps the numbers, so starting it is one more click.
		clickThrough(t, ctx, "start", "#b-start", `/^\/batches\/[^/]+$/.test(location.pathname) && location.pathname !== "/batches/new"`)
		batch := strings.TrimPrefix(location(t), e.url+"/batches/")
		if h1 := get(ctx, t, "h1", chromedp.Text(css("main h1"))); !strings.Contains(h1, "Browser campaign") {
			t.Fatalf("campaign page h1 %q", h1)
		}
		if total := get(ctx, t, "total", chromedp.Evaluate[string](jsText("[data-live-region=campaign] .big"))); !strings.HasSuffix(strings.TrimSpace(total), "/ 30") {
			t.Fatalf("progress says %q", total)
		}
		// A batch may still be starting: reload until Pause is offered.
		if !testkit.Within(10*time.Second, func() bool {
			run(t, "campaign page", chromedp.Navigate(e.url+"/batches/"+batch), chromedp.WaitVisible(css("main h1")))
			return get(ctx, t, "pause", chromedp.Evaluate[bool](`!!document.querySelector('form[action$="/pause"]')`))
		}) {
			t.Fatalf("no Pause button on the running campaign: %v", apiField(t, e, "/api/v1/calls/batches/"+batch, "status"))
		}
		clickThrough(t, ctx, "pause", `form[action$="/pause"] button`, `!!document.querySelector('form[action$="/resume"]')`)
		if st := apiField(t, e, "/api/v1/calls/batches/"+batch, "status"); st != "paused" {
			t.Fatalf("after Pause the API says %v", st)
		}
		if badge := get(ctx, t, "badge", chromedp.Evaluate[string](jsText("main h1 .badge"))); !strings.Contains(badge, "paused") {
			t.Fatalf("after Pause the badge says %q", badge)
		}
		run(t, "shot", shoot(shots, "controls-paused"))
		clickThrough(t, ctx, "resume", `form[action$="/resume"] button`, `!!document.querySelector('form[action$="/pause"]')`)
		if st := apiField(t, e, "/api/v1/calls/batches/"+batch, "status"); st != "running" {
			t.Fatalf("after Resume the API says %v", st)
		}
	})

	t.Run("call", func(t *testing.T) {
		run(t, "new call", chromedp.Navigate(e.url+"/calls/new"), chromedp.WaitVisible(css("#c-phone")),
			chromedp.SendKeys(css("#c-phone"), "+14155550777"))
		if sel := get(ctx, t, "agent", chromedp.Value(css("#c-agent"))); sel != agent.ID {
			t.Fatalf("the agent select holds %q, want %q", sel, agent.ID)
		}
		clickThrough(t, ctx, "call now", `form[action="/calls"] button[type="submit"]`, notice+` === "Call queued"`)
		id := strings.TrimPrefix(location(t), e.url+"/calls/")
		if id == "" || strings.Contains(id, "/") {
			t.Fatalf("after Call now at %s", location(t))
		}
		var out map[string]any
		if code := e.doJSON("GET", "/api/v1/calls/"+id, e.key, nil, &out); code != 200 || !strings.Contains(fmt.Sprint(out), "+14155550777") {
			t.Fatalf("the API does not have the call: %d %v", code, out)
		}
	})

	// Last, so the window it sets holds no call of the steps above.
	t.Run("calling hours", func(t *testing.T) {
		run(t, "settings", chromedp.Navigate(e.url+"/settings"), chromedp.WaitVisible(css("#h-start")),
			chromedp.SetValue(css("#h-start"), "08:30"), chromedp.SetValue(css("#h-end"), "19:45"),
			chromedp.SetValue(css("#h-tz"), "Europe/Berlin"))
		clickThrough(t, ctx, "save", `form[action="/settings"] button[type="submit"]`, notice+` === "Calling hours saved"`)
		run(t, "reload", chromedp.Reload(), chromedp.WaitVisible(css("#h-start")))
		got := get(ctx, t, "kept", chromedp.Evaluate[[]string](`["h-start", "h-end", "h-tz"].map(id => document.getElementById(id).value)`))
		if strings.Join(got, " ") != "08:30 19:45 Europe/Berlin" {
			t.Fatalf("after a reload the form holds %v", got)
		}
		run(t, "shot", shoot(shots, "controls-settings"))
		var out map[string]any
		if code := e.doJSON("GET", "/api/v2/organization/settings", e.key, nil, &out); code != 200 || !strings.Contains(fmt.Sprint(out), "Europe/Berlin") {
			t.Fatalf("the API does not keep the change: %d %v", code, out)
		}
	})
}
