package convstore

import (
	"encoding/json"
	"fmt"
)

// SnapshotVersion is the format of the data conversation.started and
// conversation.ended record (sqldb.Event.Version): a Snapshot as JSON, read
// back with DecodeSnapshot. The events feature renders the public body from
// it where an event leaves the process.
const SnapshotVersion = 1

// Snapshot is a conversation as its event's transaction left it, with its
// messages at the end (nil when it started).
type Snapshot struct {
	Conversation Conversation
	Messages     []Message
}

// The stored forms keep JSON documents as text, so they come back byte for
// byte and nil stays nil (the outer fields hide the embedded ones).
type (
	convJSON struct {
		Conversation
		Metadata *string
	}
	messageJSON struct {
		Message
		Citations, ToolCalls, Usage *string
	}
	snapshotJSON struct {
		Conversation convJSON
		Messages     []messageJSON
	}
)

// MarshalJSON encodes the snapshot in its stored form.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	out := snapshotJSON{Conversation: convJSON{Conversation: s.Conversation, Metadata: text(s.Conversation.Metadata)}}
	if s.Messages != nil {
		out.Messages = make([]messageJSON, len(s.Messages))
		for i, m := range s.Messages {
			out.Messages[i] = messageJSON{Message: m, Citations: text(m.Citations), ToolCalls: text(m.ToolCalls), Usage: text(m.Usage)}
		}
	}
	return json.Marshal(out)
}

// DecodeSnapshot reads the data of a conversation event recorded in format
// version.
func DecodeSnapshot(data []byte, version int) (Snapshot, error) {
	if version != SnapshotVersion {
		return Snapshot{}, fmt.Errorf("storage: conversation snapshot format %d", version)
	}
	var in snapshotJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return Snapshot{}, fmt.Errorf("storage: conversation snapshot: %w", err)
	}
	s := Snapshot{Conversation: in.Conversation.Conversation}
	s.Conversation.Metadata = raw(in.Conversation.Metadata)
	if in.Messages != nil {
		s.Messages = make([]Message, len(in.Messages))
		for i, m := range in.Messages {
			s.Messages[i] = m.Message
			s.Messages[i].Citations, s.Messages[i].ToolCalls, s.Messages[i].Usage = raw(m.Citations), raw(m.ToolCalls), raw(m.Usage)
		}
	}
	return s, nil
}

// text is a JSON document as text (nil for none).
func text(b json.RawMessage) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// raw is the document text keeps.
func raw(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}
