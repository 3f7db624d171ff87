package convstore

import (
	"encoding/json"

	"github.com/agentd/agentd/storage/sqldb"
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
	out := snapshotJSON{Conversation: convJSON{Conversation: s.Conversation, Metadata: sqldb.JSONText(s.Conversation.Metadata)}}
	if s.Messages != nil {
		out.Messages = make([]messageJSON, len(s.Messages))
		for i, m := range s.Messages {
			out.Messages[i] = messageJSON{Message: m, Citations: sqldb.JSONText(m.Citations),
				ToolCalls: sqldb.JSONText(m.ToolCalls), Usage: sqldb.JSONText(m.Usage)}
		}
	}
	return json.Marshal(out)
}

// DecodeSnapshot reads the data of a conversation event recorded in format
// version.
func DecodeSnapshot(data []byte, version int) (Snapshot, error) {
	var in snapshotJSON
	if err := sqldb.DecodeSnapshot(data, version, SnapshotVersion, "conversation snapshot", &in); err != nil {
		return Snapshot{}, err
	}
	s := Snapshot{Conversation: in.Conversation.Conversation}
	s.Conversation.Metadata = sqldb.RawJSON(in.Conversation.Metadata)
	if in.Messages != nil {
		s.Messages = make([]Message, len(in.Messages))
		for i, m := range in.Messages {
			s.Messages[i] = m.Message
			s.Messages[i].Citations, s.Messages[i].ToolCalls, s.Messages[i].Usage = sqldb.RawJSON(m.Citations),
				sqldb.RawJSON(m.ToolCalls), sqldb.RawJSON(m.Usage)
		}
	}
	return s, nil
}
