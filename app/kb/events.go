package kb

import (
	"encoding/json"

	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/storage/kbstore"
)

// SourceView is a source as GET /api/v1/kb/sources lists it.
type SourceView struct {
	ID          string          `json:"id"`
	ExternalID  string          `json:"externalId"`
	Title       string          `json:"title"`
	Status      string          `json:"status"`
	ChunkCount  int             `json:"chunkCount"`
	FileSize    int             `json:"fileSize"`
	Error       *string         `json:"error"`
	ContentRole string          `json:"contentRole"`
	CreatedAt   string          `json:"createdAt"`
	UpdatedAt   string          `json:"updatedAt"`
	Metadata    json.RawMessage `json:"metadata"`
}

// ViewOf is s as the source list shows it.
func ViewOf(s kbstore.Source) SourceView {
	return SourceView{ID: s.ID, ExternalID: s.ExternalID, Title: s.Title, Status: s.Status,
		ChunkCount: s.ChunkCount, FileSize: s.FileSize, Error: s.Error, ContentRole: s.ContentRole,
		CreatedAt: apitime.Format(s.CreatedAt), UpdatedAt: apitime.Format(s.UpdatedAt), Metadata: json.RawMessage(s.Metadata)}
}

// sourceEventView is a source as the list shows it, plus the collection it
// belongs to.
type sourceEventView struct {
	SourceView
	CollectionID string `json:"collectionId"`
}

// SourceEventView is the data of kb.source.* events.
func SourceEventView(s kbstore.Source) any {
	return sourceEventView{SourceView: ViewOf(s), CollectionID: s.CollectionID}
}
