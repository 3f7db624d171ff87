package kbstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd/agentd/storage/search"
	"github.com/agentd/agentd/storage/sqldb"
)

// KBFilter restricts a knowledge search: by content role and by equality
// of top-level metadata keys (values are strings, numbers or booleans).
type KBFilter struct {
	ContentRole string
	Metadata    map[string]any
}

func (f KBFilter) empty() bool { return f.ContentRole == "" && len(f.Metadata) == 0 }

// where returns SQL conditions on kb_sources aliased s, with their args,
// in dialect d. A boolean filter is the number SQLite's json_extract
// gives (true is 1, false 0).
func (f KBFilter) where(d sqldb.Dialect) (string, []any) {
	var b strings.Builder
	var args []any
	if f.ContentRole != "" {
		b.WriteString(" AND s.content_role = ?")
		args = append(args, f.ContentRole)
	}
	for k, v := range f.Metadata {
		if bv, ok := v.(bool); ok {
			v = 0
			if bv {
				v = 1
			}
		}
		cond, a := d.JSONFieldIs("s.metadata", k, v)
		b.WriteString(" AND " + cond)
		args = append(args, a...)
	}
	return b.String(), args
}

// LoadText reads knowledge chunks as keyword documents, the search.TextLoader
// of their keyword index (space "kb:<collectionId>", the chunks' vector
// space: every chunk is written with its vector, which logs it): title,
// heading path and chunk text.
func (db *Knowledge) LoadText(ctx context.Context, tx *sql.Tx, space string, ids []int64) ([]search.TextDoc, error) {
	col, ok := strings.CutPrefix(space, "kb:")
	if !ok {
		return nil, nil
	}
	q := `SELECT c.id, s.title, c.heading_path, c.content FROM kb_chunks c JOIN kb_sources s ON s.id = c.source_id WHERE c.collection_id = ?`
	args := []any{col}
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		q += " AND c.id IN (" + strings.Repeat("?,", len(ids)-1) + "?)"
		for _, id := range ids {
			args = append(args, id)
		}
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: load chunk text: %w", err)
	}
	return sqldb.Collect(rows, func(sc sqldb.Scanner) (search.TextDoc, error) {
		var id int64
		var title, hp, content string
		err := sc.Scan(&id, &title, &hp, &content)
		var path []string
		json.Unmarshal([]byte(hp), &path)
		return search.TextDoc{ID: id, Fields: []search.Field{{Text: title + "\n" + strings.Join(path, "\n") + "\n" + content}}}, err
	})
}

// KBAllowedChunks returns the ids of a collection's chunks that pass f, as
// the candidate list of a filtered vector search; nil when f is empty (no
// restriction).
func (db *Knowledge) KBAllowedChunks(ctx context.Context, collectionID string, f KBFilter) ([]int64, error) {
	if f.empty() {
		return nil, nil
	}
	cond, args := f.where(db.c.Dialect())
	rows, err := db.r.QueryContext(ctx, `SELECT c.id FROM kb_chunks c JOIN kb_sources s ON s.id = c.source_id
		WHERE c.collection_id = ?`+cond, append([]any{collectionID}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("storage: filter chunks: %w", err)
	}
	return sqldb.Collect(rows, sqldb.ScanOne[int64])
}

// KBChunkHit is a chunk as search returns it, with its source.
type KBChunkHit struct {
	ChunkID     int64
	SourceID    string
	ExternalID  string
	Title       string
	ChunkIndex  int
	HeadingPath []string
	Content     string
}

// KBChunks reads chunks with their source by id (missing ids are absent).
func (db *Knowledge) KBChunks(ctx context.Context, ids []int64) (map[int64]KBChunkHit, error) {
	out := make(map[int64]KBChunkHit, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// Prepared once per id count (a search reads at most 50).
	rows, err := db.c.ReadRows(ctx, `SELECT c.id, s.id, s.external_id, s.title, c.chunk_index, c.heading_path, c.content
		FROM kb_chunks c JOIN kb_sources s ON s.id = c.source_id WHERE c.id IN (`+strings.Repeat("?,", len(ids)-1)+`?)`, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: read chunks: %w", err)
	}
	err = sqldb.Each(rows, func(sc sqldb.Scanner) error {
		var h KBChunkHit
		var hp string
		if err := sc.Scan(&h.ChunkID, &h.SourceID, &h.ExternalID, &h.Title, &h.ChunkIndex, &hp, &h.Content); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(hp), &h.HeadingPath); err != nil || h.HeadingPath == nil {
			h.HeadingPath = []string{}
		}
		out[h.ChunkID] = h
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
