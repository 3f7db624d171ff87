// Package apitime is the one timestamp format the API sends, shared by the
// HTTP layer and the feature packages that build response views.
package apitime

import "time"

// Layout is RFC 3339 in UTC with millisecond precision.
const Layout = "2006-01-02T15:04:05.000Z07:00"

// Format formats t in UTC with milliseconds: 2026-11-22T10:04:05.123Z.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Ptr formats an optional time; nil stays nil (JSON null).
func Ptr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Format(*t)
	return &s
}
