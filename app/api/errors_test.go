package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
)

var updateCoreGolden = flag.Bool("update-core", false, "rewrite testdata/golden/core")

// Every family's error shape is pinned by a golden file.
func TestErrorShapesGolden(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 4, 5, 123e6, time.UTC)
	validation := &Error{Kind: errs.Invalid, Message: "listings.3.price: must be >= 0",
		Details: []FieldError{{Path: "listings.3.price", Message: "must be >= 0"}}}
	limited := &Error{Kind: errs.RateLimited, Code: codeRateLimited, Message: "Rate limit exceeded: 1000 requests per minute. Retry in 60 seconds."}
	cases := map[string]any{
		"v2_403":          errorBody(FamilyV2, errs.New(errs.Forbidden, "insufficient permissions"), now),
		"kb_400":          errorBody(FamilyKB, badRequest("collectionId is required"), now),
		"listings_400":    errorBody(FamilyListings, validation, now),
		"agents_404":      errorBody(FamilyAgents, notFound("agent not found"), now),
		"calls_400":       errorBody(FamilyCalls, badRequest("contactPhone must be E.164"), now),
		"rate_limited":    errorBody(FamilyCalls, limited, now),
		"rate_limited_kb": errorBody(FamilyKB, limited, now),
		"internal":        errorBody(FamilyKB, httpx.ToError(os.ErrClosed), now),
	}
	for name, body := range cases {
		got, _ := json.MarshalIndent(body, "", "  ")
		path := filepath.Join("..", "..", "testdata", "golden", "core", name+".json")
		if *updateCoreGolden {
			os.WriteFile(path, append(got, '\n'), 0o644)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./app -run Golden -update-core)", name, err)
		}
		if !bytes.Equal(bytes.TrimSpace(want), got) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// A 500 never leaks its cause.
func TestInternalErrorHidesCause(t *testing.T) {
	e := httpx.ToError(os.ErrPermission)
	if httpx.StatusOf(e) != 500 || e.Message != "Internal server error" {
		t.Fatalf("%+v", e)
	}
}

func FuzzParseAPIKey(f *testing.F) {
	f.Add("agd_abc", "Bearer agd_x", "")
	f.Add("", "bearer   "+string(rune(0))+"k", "api_key=1&x=2")
	f.Add("", "Basic zzz", "token")
	f.Add(" ", "Bearer", "a=b&&apiKey")
	f.Fuzz(func(t *testing.T, xkey, authz, query string) {
		h := make(map[string][]string)
		if xkey != "" {
			h["X-Api-Key"] = []string{xkey}
		}
		if authz != "" {
			h["Authorization"] = []string{authz}
		}
		k, err := parseAPIKey(h, query)
		if err != nil {
			if k != "" {
				t.Fatal("key returned with an error")
			}
			return
		}
		if k == "" {
			t.Fatal("empty key without error")
		}
		if xk := trimSpace(xkey); xk != "" && k != xk {
			t.Fatalf("x-api-key must win: got %q", k)
		}
		if access.WellFormedKey(k) && len(k) != access.KeyLen {
			t.Fatal("wellFormedKey accepted a wrong length")
		}
	})
}

func trimSpace(s string) string { return string(bytes.TrimSpace([]byte(s))) }

// A handler's own 5xx keeps its message; an unknown error's does not leak.
func TestServiceUnavailableKeepsMessage(t *testing.T) {
	body := errorBody(FamilyListings, httpx.ToError(&Error{Kind: errs.Unavailable, Message: "embedding service unavailable", Err: os.ErrDeadlineExceeded}), time.Now())
	if b, _ := json.Marshal(body); !bytes.Contains(b, []byte("embedding service unavailable")) || bytes.Contains(b, []byte("deadline")) {
		t.Fatalf("%s", b)
	}
}

// A database that cannot be reached is a 503 with Retry-After in every
// family's shape, naming the database; never a 500 INTERNAL_ERROR. The
// errors are the driver's own (a server shutting down, a refused connection).
func TestDatabaseUnavailableIs503(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, cause := range []error{
		fmt.Errorf("storage: list agents: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}),
		fmt.Errorf("storage: begin: %w", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}),
	} {
		for _, fam := range []Family{FamilyV2, FamilyAgents, FamilyCalls, FamilyListings, FamilyKB, FamilyOpenAI} {
			w := httptest.NewRecorder()
			s.writeError(w, httptest.NewRequest("GET", "/api/v1/agents", nil), fam, cause)
			b := w.Body.String()
			if w.Code != 503 || w.Header().Get("Retry-After") != errs.DBRetryAfter || !strings.Contains(b, "database unavailable") ||
				strings.Contains(b, "INTERNAL_ERROR") || strings.Contains(b, "administrator") {
				t.Errorf("family %d, %v: %d Retry-After %q %s", fam, cause, w.Code, w.Header().Get("Retry-After"), b)
			}
			if fam == FamilyAgents && !strings.Contains(b, `"SERVICE_UNAVAILABLE"`) {
				t.Errorf("v1 agents 503 code: %s", b)
			}
		}
	}
}

// The throttle lets one line a second through and counts the rest.
func TestThrottleOneLineASecond(t *testing.T) {
	var th errs.Throttle
	let := 0
	for range 1000 {
		if ok, _ := th.Allow(true); ok {
			let++
		}
		if ok, _ := th.Allow(false); !ok {
			t.Fatal("an unthrottled line was held back")
		}
	}
	if let < 1 || let > 2 { // 2 when the loop crossed a second
		t.Fatalf("%d of 1,000 throttled lines let through", let)
	}
}
