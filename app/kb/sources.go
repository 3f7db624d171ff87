package kb

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/storage/kbstore"
)

// Source statuses a client sees.
const (
	StatusProcessing = "processing"
	StatusUnchanged  = "unchanged"
	StatusFailed     = "failed"
)

// UpsertResult is the outcome of writing one source.
type UpsertResult struct {
	DocumentID string `json:"documentId"`
	ExternalID string `json:"externalId"`
	Status     string `json:"status"` // processing or unchanged
	Message    string `json:"message"`
}

// UpsertSource validates a source and creates or updates it in a collection
// of the organization; changed content is queued for the worker.
func (s *Service) UpsertSource(ctx context.Context, orgID string, body SourceInput) (UpsertResult, error) {
	if body.CollectionID == "" {
		return UpsertResult{}, invalid("collectionId", "collectionId is required")
	}
	in, fe := body.Validate()
	if fe != nil {
		return UpsertResult{}, fe
	}
	c, err := s.checkCollection(ctx, orgID, body.CollectionID)
	if err != nil {
		return UpsertResult{}, err
	}
	res, err := s.db.KB.UpsertSource(ctx, orgID, c.ID, in)
	if err != nil {
		return UpsertResult{}, err
	}
	out := UpsertResult{DocumentID: res.DocumentID, ExternalID: in.ExternalID,
		Status: StatusProcessing, Message: "Source queued for chunking and embedding"}
	if res.Status == kbstore.SourceUnchanged {
		out.Status, out.Message = StatusUnchanged, "Content unchanged; nothing reprocessed"
	} else {
		s.worker.Wake()
	}
	return out, nil
}

// BatchItem is the outcome of one item of a batch.
type BatchItem struct {
	ExternalID string `json:"externalId"`
	DocumentID string `json:"documentId"` // "" when failed
	Status     string `json:"status"`     // created, updated, unchanged or failed
	Error      string `json:"error,omitempty"`
	// Err is why a failed item failed, for the caller's log only.
	Err error `json:"-"`
}

// BatchSummary counts a batch's items by outcome.
type BatchSummary struct {
	Total     int `json:"total"`
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
}

// BatchResult is the outcome of a batch: every item in order, the counts
// and a sentence saying them.
type BatchResult struct {
	Results []BatchItem  `json:"results"`
	Summary BatchSummary `json:"summary"`
	Message string       `json:"message"`
}

// UpsertBatch validates a batch all-or-nothing, then writes its items in
// order (in one transaction; should that fail, in one each): a repeated
// externalId updates what the earlier item wrote, and one failing item
// leaves the others standing.
func (s *Service) UpsertBatch(ctx context.Context, orgID string, body BatchInput) (BatchResult, error) {
	b, err := body.Validate()
	if err != nil {
		return BatchResult{}, err
	}
	c, err := s.checkCollection(ctx, orgID, b.CollectionID)
	if err != nil {
		return BatchResult{}, err
	}
	out := BatchResult{Results: make([]BatchItem, len(b.Sources))}
	sum := &out.Summary
	results, errs := s.db.KB.UpsertSources(ctx, orgID, c.ID, b.Sources)
	for i, in := range b.Sources {
		res, err := results[i], errs[i]
		item := BatchItem{ExternalID: in.ExternalID, DocumentID: res.DocumentID, Status: res.Status}
		if err != nil {
			item = BatchItem{ExternalID: in.ExternalID, Status: StatusFailed, Error: "could not store the source", Err: err}
		}
		switch item.Status {
		case kbstore.SourceCreated:
			sum.Created++
		case kbstore.SourceUpdated:
			sum.Updated++
		case kbstore.SourceUnchanged:
			sum.Unchanged++
		case StatusFailed:
			sum.Failed++
		}
		out.Results[i] = item
	}
	sum.Total = len(out.Results)
	if sum.Created+sum.Updated > 0 {
		s.worker.Wake()
	}
	out.Message = fmt.Sprintf("Processed %d sources: %d created, %d updated, %d unchanged, %d failed",
		sum.Total, sum.Created, sum.Updated, sum.Unchanged, sum.Failed)
	return out, nil
}

// sourceStatuses are the statuses the source list filters by.
var sourceStatuses = map[string]bool{"pending": true, "processing": true, "completed": true, "failed": true}

// SourceQuery is a source list request: the collection, optional filters
// and the page.
type SourceQuery struct {
	CollectionID string
	ExternalID   string
	Status       string
	Page         Page
}

// ListSources is one page of a collection's sources (of the organization)
// and their total count.
func (s *Service) ListSources(ctx context.Context, orgID string, q SourceQuery) ([]kbstore.Source, int, error) {
	if q.Status != "" && !sourceStatuses[q.Status] {
		return nil, 0, invalid("status", "status must be one of pending, processing, completed, failed")
	}
	c, err := s.checkCollection(ctx, orgID, q.CollectionID)
	if err != nil {
		return nil, 0, err
	}
	f := kbstore.SourceFilter{ExternalID: q.ExternalID, Status: q.Status, Limit: q.Page.Limit, Offset: q.Page.Offset}
	return s.db.KB.ListSources(ctx, c.ID, f)
}

// DeleteInput is a bulk delete by externalId.
type DeleteInput struct {
	CollectionID string   `json:"collectionId"`
	ExternalIDs  []string `json:"externalIds"`
}

// DeleteResult says which sources went and which were not there.
type DeleteResult struct {
	Deleted            int      `json:"deleted"`
	DeletedExternalIDs []string `json:"deletedExternalIds"`
	NotFound           []string `json:"notFound"`
	Message            string   `json:"message"`
}

// DeleteSources deletes up to MaxDelete sources of a collection by
// externalId (repeats count once); unknown ids are reported, not refused.
func (s *Service) DeleteSources(ctx context.Context, orgID string, in DeleteInput) (DeleteResult, error) {
	switch {
	case in.CollectionID == "":
		return DeleteResult{}, invalid("collectionId", "collectionId is required")
	case in.ExternalIDs == nil:
		return DeleteResult{}, invalid("externalIds", "externalIds is required")
	case len(in.ExternalIDs) < 1 || len(in.ExternalIDs) > MaxDelete:
		return DeleteResult{}, invalid("externalIds", fmt.Sprintf("externalIds must hold 1 to %d items, got %d", MaxDelete, len(in.ExternalIDs)))
	}
	seen := map[string]bool{}
	ids := make([]string, 0, len(in.ExternalIDs))
	for i, id := range in.ExternalIDs {
		if id == "" {
			path := fmt.Sprintf("externalIds.%d", i)
			return DeleteResult{}, invalid(path, path+": externalId is required")
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	c, err := s.checkCollection(ctx, orgID, in.CollectionID)
	if err != nil {
		return DeleteResult{}, err
	}
	deleted, notFound, err := s.db.KB.DeleteSources(ctx, c.ID, ids)
	if err != nil {
		return DeleteResult{}, err
	}
	return DeleteResult{Deleted: len(deleted), DeletedExternalIDs: deleted, NotFound: notFound,
		Message: fmt.Sprintf("Deleted %d sources, %d not found", len(deleted), len(notFound))}, nil
}
