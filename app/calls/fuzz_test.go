package calls

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
)

// FuzzScheduleBody: any body that decodes either validates or fails with
// an invalid-input *errs.Error naming a field; accepted input is clean
// (E.164 phone, priority in range, scheduledAt not in the past).
func FuzzScheduleBody(f *testing.F) {
	f.Add(`{"agentId":"6f1d2c1e-0000-4000-8000-000000000000","contactPhone":"+1 (415) 555-0100"}`)
	f.Add(`{"agentId":"6f1d2c1e-0000-4000-8000-000000000000","contactPhone":"\u200b+14155550100","scheduledAt":"2020-01-01T00:00:00Z","priority":0}`)
	f.Add(`{"agentId":"6F1D2C1E-0000-4000-8000-000000000000","contactPhone":"+44 20 7946 0958","retryIntervals":[{"value":5,"unit":"hours"}],"callMetadata":{"timezone":"Asia/Kolkata","tags":["a"],"doNotCallBefore":"09:00"}}`)
	f.Add(`{"agentId":"x","contactPhone":5}`)
	f.Add(`{"contactEmail":"a@b.c","retrySchedule":["2030-01-01T10:00Z"],"maxRetries":1}`)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body string) {
		var req ScheduleRequest
		if json.Unmarshal([]byte(body), &req) != nil {
			return // the HTTP layer's decoder refuses it (tested in app)
		}
		sc, err := validateSchedule(req, now)
		if err == nil {
			if !clean.IsE164(sc.phone) || sc.priority < 0 || sc.priority > MaxPriority || (sc.at != nil && sc.at.Before(now)) {
				t.Fatalf("accepted bad input: %+v", sc)
			}
			return
		}
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Message == "" || e.Field == "" {
			t.Fatalf("error %#v is not invalid input naming a field", err)
		}
	})
}
