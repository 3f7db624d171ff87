package listings

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/storage/listingstore"
	"github.com/agentd/agentd/storage/sqldb"
)

// embedBatch is how many texts go to the embedder per call.
const embedBatch = 256

// SyncRequest is one sync: validated listings of an organization, applied
// in order (a repeated externalId is an update of the earlier item).
type SyncRequest struct {
	OrgID       string
	Items       []Input
	DeleteStale bool
	// StaleCategory is the category compared by DeleteStale: the first
	// item's ("" for listings without category).
	StaleCategory string
	// Keep lists more external ids DeleteStale keeps (an import spreading
	// one category over several syncs); the items' ids are always kept.
	Keep []string
}

// SyncFromBody validates a sync body (nothing is written unless every
// listing is valid) and applies it; deleteStale compares the first item's
// category.
func (s *Service) SyncFromBody(ctx context.Context, orgID string, body SyncBody) (SyncReport, error) {
	items, deleteStale, err := ParseSync(body)
	if err != nil {
		return SyncReport{}, err
	}
	return s.Sync(ctx, SyncRequest{OrgID: orgID, Items: items, DeleteStale: deleteStale, StaleCategory: items[0].Category})
}

// plannedWrite is one storage write and the report entries it decides.
type plannedWrite struct {
	in      *Input
	w       listingstore.ListingWrite
	text    string // embedded text; "" when the stored vector stays
	created bool
	vec     []float32
	failed  string
}

// Sync applies a sync: unchanged listings are skipped (no write, no
// embedding), created and changed ones are embedded (only when their
// embedded text changed) and written with their vectors in one transaction,
// then stale listings of the category are deleted.
func (s *Service) Sync(ctx context.Context, req SyncRequest) (SyncReport, error) {
	db, vec := s.DB, s.Vectors
	var rep SyncReport
	ids := make([]string, 0, len(req.Items))
	for i := range req.Items {
		ids = append(ids, req.Items[i].ExternalID)
	}
	states, err := db.Listings.ListingStates(ctx, req.OrgID, ids)
	if err != nil {
		return rep, err
	}
	space := ""
	if vec.enabled() {
		space = vec.model().String()
	}
	// Plan: the last occurrence of an external id is written; each
	// occurrence is reported against the state before it.
	last := map[string]int{}
	for i := range req.Items {
		last[req.Items[i].ExternalID] = i
	}
	type seen struct {
		hash    []byte
		created bool
	}
	prev := map[string]seen{}
	status := make([]string, len(req.Items)) // imported, updated, unchanged
	var plan []*plannedWrite
	byExt := map[string]*plannedWrite{}
	for i := range req.Items {
		in := &req.Items[i]
		h := in.contentHash()
		st, stored := states[in.ExternalID]
		p, before := prev[in.ExternalID]
		switch {
		case before && string(p.hash) == string(h):
			status[i] = "unchanged"
		case before:
			status[i] = "updated"
		case stored && string(st.Hash) == string(h):
			status[i] = "unchanged"
		case stored:
			status[i] = "updated"
		default:
			status[i] = "imported"
		}
		prev[in.ExternalID] = seen{hash: h}
		if last[in.ExternalID] != i {
			continue
		}
		same := stored && string(st.Hash) == string(h)
		var text string
		var eh []byte
		if space != "" {
			text = in.embedText()
			eh = textHash(text, space)
			if stored && string(st.EmbedHash) == string(eh) {
				text = "" // the stored vector stays
			}
		}
		if same && text == "" {
			continue // final state equals the stored one, vector included
		}
		// A same listing is still written when its vector is stale (the
		// embedder changed); it is reported as unchanged.
		pw := &plannedWrite{in: in, w: in.listingWrite(), created: !stored, text: text}
		pw.w.Seq, pw.w.ID, pw.w.EmbedHash = st.Seq, st.ID, eh
		plan = append(plan, pw)
		byExt[in.ExternalID] = pw
	}
	if err := embedPlan(ctx, vec, plan); err != nil {
		return rep, err
	}
	var writes []listingstore.ListingWrite
	var wplan []*plannedWrite
	for _, pw := range plan {
		if pw.failed == "" {
			pw.w.Vec = pw.vec
			writes = append(writes, pw.w)
			wplan = append(wplan, pw)
		}
	}
	var stale *listingstore.StaleScope
	if req.DeleteStale {
		stale = &listingstore.StaleScope{Category: req.StaleCategory, Keep: append(ids, req.Keep...)}
	}
	var vs *listingstore.VectorSpec
	if vec.enabled() {
		vs = &listingstore.VectorSpec{Space: Space(req.OrgID), Model: vec.model()}
	}
	out, err := db.Listings.SyncListings(ctx, req.OrgID, writes, stale, vs)
	if err != nil {
		return rep, err
	}
	for i, r := range out.Results {
		pw := wplan[i]
		pw.w.Seq, pw.w.ID = r.Seq, r.ID
		if r.Err != nil {
			pw.failed = writeFailure(r.Err)
		}
	}
	rep.Deleted = len(out.Deleted)
	for i := range req.Items {
		in := &req.Items[i]
		item := SyncItem{ExternalID: in.ExternalID, Title: in.Title}
		pw := byExt[in.ExternalID]
		if pw != nil {
			item.ID = pw.w.ID
		} else {
			item.ID = states[in.ExternalID].ID
		}
		switch {
		case pw != nil && pw.failed != "":
			item.Error = pw.failed
			rep.Failed = append(rep.Failed, item)
		case status[i] == "imported":
			rep.Imported = append(rep.Imported, item)
		case status[i] == "updated":
			rep.Updated = append(rep.Updated, item)
		default:
			rep.Unchanged = append(rep.Unchanged, item)
		}
	}
	return rep, nil
}

// embedPlan embeds the texts that changed, in batches. An embedder failure
// marks the batch's listings failed rather than failing the whole sync.
func embedPlan(ctx context.Context, vec *Vectors, plan []*plannedWrite) error {
	var todo []*plannedWrite
	for _, pw := range plan {
		if pw.text != "" {
			todo = append(todo, pw)
		}
	}
	for start := 0; start < len(todo); start += embedBatch {
		batch := todo[start:min(start+embedBatch, len(todo))]
		texts := make([]string, len(batch))
		for i, pw := range batch {
			texts[i] = pw.text
		}
		vecs, err := vec.Embedder.Embed(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("%w: %d vectors for %d texts", embed.ErrEmbedder, len(vecs), len(texts))
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			for _, pw := range batch {
				pw.failed = "embedding failed"
			}
			continue
		}
		for i, pw := range batch {
			pw.vec = vecs[i]
		}
	}
	return nil
}

// writeFailure is the client-facing reason of a failed listing write.
func writeFailure(err error) string {
	if errors.Is(err, sqldb.ErrConflict) {
		return "conflicting write of the same externalId"
	}
	if errors.Is(err, sqldb.ErrNotFound) {
		return "listing was deleted while syncing"
	}
	return "could not be written"
}
