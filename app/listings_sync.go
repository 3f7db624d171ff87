package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd/agentd/embed"
	"github.com/agentd/agentd/storage"
)

// MaxSyncListings is the most listings one sync request may carry.
const MaxSyncListings = 1000

// embedBatch is how many texts go to the embedder per call.
const embedBatch = 256

// ListingSync is one sync: validated listings of an organization, applied
// in order (a repeated externalId is an update of the earlier item).
type ListingSync struct {
	OrgID       string
	Items       []ListingInput
	DeleteStale bool
	// StaleCategory is the category compared by DeleteStale: the first
	// item's ("" for listings without category).
	StaleCategory string
	// Keep lists more external ids DeleteStale keeps (an import spreading
	// one category over several syncs); the items' ids are always kept.
	Keep []string
}

// SyncItem is one listing in a sync report.
type SyncItem struct {
	ID         string `json:"id"`
	ExternalID string `json:"externalId"`
	Title      string `json:"title"`
	Error      string `json:"error,omitempty"`
}

// SyncReport is what a sync did, item by item.
type SyncReport struct {
	Imported  []SyncItem
	Updated   []SyncItem
	Unchanged []SyncItem
	Failed    []SyncItem
	Deleted   int
}

// ListingVectors is the vector side of listings: the embedder and the
// shared in-memory vector index (a mirror of the vectors table, so writes by
// another process, such as agentd import --db, are seen too). Each
// organization's listings are the space "listings:<orgID>".
type ListingVectors struct {
	Embedder embed.Embedder
	Index    *storage.VectorIndex
}

// listingSpace is the vector space of an organization's listings.
func listingSpace(orgID string) string { return "listings:" + orgID }

// model identifies the embedder's vectors.
func (v *ListingVectors) model() storage.VectorModel {
	return storage.VectorModel{Embedder: v.Embedder.Name(), Model: v.Embedder.Model(), Dims: v.Embedder.Dimensions()}
}

// enabled reports whether listings get vectors at all.
func (v *ListingVectors) enabled() bool { return v != nil && v.Embedder != nil }

// plannedWrite is one storage write and the report entries it decides.
type plannedWrite struct {
	in      *ListingInput
	w       storage.ListingWrite
	text    string // embedded text; "" when the stored vector stays
	created bool
	vec     []float32
	failed  string
}

// SyncListings applies a sync: unchanged listings are skipped (no write, no
// embedding), created and changed ones are embedded (only when their
// embedded text changed) and written with their vectors in one transaction,
// then stale listings of the category are deleted.
func SyncListings(ctx context.Context, db *storage.DB, vec *ListingVectors, s ListingSync) (SyncReport, error) {
	var rep SyncReport
	ids := make([]string, 0, len(s.Items))
	for i := range s.Items {
		ids = append(ids, s.Items[i].ExternalID)
	}
	states, err := db.ListingStates(ctx, s.OrgID, ids)
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
	for i := range s.Items {
		last[s.Items[i].ExternalID] = i
	}
	type seen struct {
		hash    []byte
		created bool
	}
	prev := map[string]seen{}
	status := make([]string, len(s.Items)) // imported, updated, unchanged
	var plan []*plannedWrite
	byExt := map[string]*plannedWrite{}
	for i := range s.Items {
		in := &s.Items[i]
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
	var writes []storage.ListingWrite
	var wplan []*plannedWrite
	for _, pw := range plan {
		if pw.failed == "" {
			pw.w.Vec = pw.vec
			writes = append(writes, pw.w)
			wplan = append(wplan, pw)
		}
	}
	var stale *storage.StaleScope
	if s.DeleteStale {
		stale = &storage.StaleScope{Category: s.StaleCategory, Keep: append(ids, s.Keep...)}
	}
	var vs *storage.VectorSpec
	if vec.enabled() {
		vs = &storage.VectorSpec{Space: listingSpace(s.OrgID), Model: vec.model()}
	}
	out, err := db.SyncListings(ctx, s.OrgID, writes, stale, vs)
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
	for i := range s.Items {
		in := &s.Items[i]
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
func embedPlan(ctx context.Context, vec *ListingVectors, plan []*plannedWrite) error {
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
	if errors.Is(err, storage.ErrConflict) {
		return "conflicting write of the same externalId"
	}
	if errors.Is(err, storage.ErrNotFound) {
		return "listing was deleted while syncing"
	}
	return "could not be written"
}
