package api

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/features"
)

// A live page whose stream is cut and whose reconnect is refused (here:
// the member's role loses events:read for a moment) does not freeze: it
// says "reconnecting", opens the stream again once it is allowed, and
// shows what happened meanwhile, without a reload. EventSource alone
// gives up for good after a refused reconnect.
func TestLivePageReopensRefusedStream(t *testing.T) {
	ctx := startBrowser(t)
	e := newTestEnv(t, fastSim(100*time.Millisecond), fastStreams)
	agent := e.voiceAgent(e.orgID)
	u, err := features.NewAccess(e.db).AddMember(context.Background(), access.Actor{Role: "owner"}, e.orgID, "ops@example.com", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if err := features.NewAccess(e.db).SetPassword(context.Background(), u.ID, "ops password ok"); err != nil {
		t.Fatal(err)
	}
	tab, _ := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(tab, chromedp.Navigate(e.url+"/login"), chromedp.WaitVisible(css("#email")),
		chromedp.SendKeys(css("#email"), "ops@example.com"), chromedp.SendKeys(css("#password"), "ops password ok"),
		chromedp.Submit(css("#email")), chromedp.WaitVisible(css("section.cards"))); err != nil {
		t.Fatalf("sign-in: %v", err)
	}
	tab = openTabIn(t, tab, e, "/calls", "table.list", "live")
	setRole := func(role string) {
		if code := e.doJSON("PATCH", "/api/v2/members/"+u.ID, e.key, map[string]string{"role": role}, nil); code != 200 {
			t.Fatalf("role %s: %d", role, code)
		}
	}
	badge := `(document.querySelector("[data-live]") || {}).textContent`
	setRole("viewer") // the stream is cut, and its reconnects refused
	waitJS(t, tab, "reconnecting", 15*time.Second, badge+` === "reconnecting"`)
	// EventSource's own retry (3 s, the browser's timer) is refused by now;
	// the page exposes no event for a refused retry to wait on.
	time.Sleep(4 * time.Second)
	setRole("admin")
	e.postBatch(e.key, agent.ID, "After the gap", 3, nil)
	waitJS(t, tab, "live again", 20*time.Second, badge+` === "live"`)
	waitJS(t, tab, "the gap's calls", 20*time.Second,
		`document.querySelectorAll('tr[data-call] [data-field="status"] .st-completed').length === 3`)
	stayed(t, tab, "calls")
}
