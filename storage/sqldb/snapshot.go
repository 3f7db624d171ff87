package sqldb

import (
	"encoding/json"
	"fmt"
)

// Snapshot formats (Event.Version n > 0) keep each JSON document of a row
// as a string of its text, so it comes back byte for byte and nil stays
// nil; the stores that record snapshots (callstore, convstore) share these.

// JSONText is a JSON document as text (nil for none).
func JSONText(b json.RawMessage) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// RawJSON is the document JSONText keeps.
func RawJSON(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}

// DecodeSnapshot reads into v the data of an event recorded in format
// version, the store's only format being want; what names the snapshot in
// errors ("call snapshot").
func DecodeSnapshot(data []byte, version, want int, what string, v any) error {
	if version != want {
		return fmt.Errorf("storage: %s format %d", what, version)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("storage: %s: %w", what, err)
	}
	return nil
}
