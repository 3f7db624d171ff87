package kb

import (
	"encoding/json"

	"github.com/agentd/agentd/app/apitime"
	"github.com/agentd/agentd/storage"
)

// sourceEventView is a knowledge source as GET /api/v1/kb/sources lists
// it, plus the collection it belongs to.
type sourceEventView struct {
	ID           string          `json:"id"`
	CollectionID string          `json:"collectionId"`
	ExternalID   string          `json:"externalId"`
	Title        string          `json:"title"`
	Status       string          `json:"status"`
	ChunkCount   int             `json:"chunkCount"`
	FileSize     int             `json:"fileSize"`
	Error        *string         `json:"error"`
	ContentRole  string          `json:"contentRole"`
	CreatedAt    string          `json:"createdAt"`
	UpdatedAt    string          `json:"updatedAt"`
	Metadata     json.RawMessage `json:"metadata"`
}

// SourceEventView is the data of kb.source.* events.
func SourceEventView(s storage.Source) any {
	return sourceEventView{ID: s.ID, CollectionID: s.CollectionID, ExternalID: s.ExternalID, Title: s.Title,
		Status: s.Status, ChunkCount: s.ChunkCount, FileSize: s.FileSize, Error: s.Error, ContentRole: s.ContentRole,
		CreatedAt: apitime.Format(s.CreatedAt), UpdatedAt: apitime.Format(s.UpdatedAt), Metadata: json.RawMessage(s.Metadata)}
}
