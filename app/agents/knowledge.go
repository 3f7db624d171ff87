package agents

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/storage/sqldb"
)

// Knowledge is what an agent answers from in conversations: its
// organization's collections (searched with hybrid search, TopK passages a
// turn) and, with Listings, the organization's listings.
type Knowledge struct {
	CollectionIDs []string `json:"collectionIds"`
	TopK          int      `json:"topK"`
	Listings      bool     `json:"listings"`
}

// Knowledge limits.
const (
	DefaultTopK       = 5
	maxTopK           = 20
	maxCollections    = 20
	maxFallback       = 2000
	DefaultFallback   = "I don't have information about that."
	maxCollectionIDLn = 64
)

// ParseKnowledge reads a stored knowledge value; absent is no knowledge
// (TopK default).
func ParseKnowledge(raw json.RawMessage) Knowledge {
	k := Knowledge{TopK: DefaultTopK}
	if present(raw) {
		json.Unmarshal(raw, &k)
	}
	if k.TopK < 1 {
		k.TopK = DefaultTopK
	}
	return k
}

// validateKnowledge checks the shape of knowledge and returns it
// normalized (topK filled, ids de-duplicated); that the collections are
// the organization's is checkCollections' job.
func validateKnowledge(raw json.RawMessage) (json.RawMessage, error) {
	if !present(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalidf("knowledge", "must be an object {collectionIds, topK, listings}")
	}
	k := Knowledge{TopK: DefaultTopK, CollectionIDs: []string{}}
	for key, v := range m {
		switch key {
		case "collectionIds":
			var ids []string
			if err := json.Unmarshal(v, &ids); err != nil {
				return nil, invalidf("knowledge.collectionIds", "must be an array of collection ids")
			}
			if len(ids) > maxCollections {
				return nil, invalidf("knowledge.collectionIds", "at most %d collections", maxCollections)
			}
			seen := map[string]bool{}
			for i, id := range ids {
				id = strings.TrimSpace(id)
				if id == "" || len(id) > maxCollectionIDLn {
					return nil, invalidf("knowledge.collectionIds."+itoa(i), "must be a collection id")
				}
				if !seen[id] {
					seen[id] = true
					k.CollectionIDs = append(k.CollectionIDs, id)
				}
			}
		case "topK":
			var f float64
			if err := json.Unmarshal(v, &f); err != nil || f != float64(int(f)) || f < 1 || f > maxTopK {
				return nil, invalidf("knowledge.topK", "must be an integer from 1 to %d", maxTopK)
			}
			k.TopK = int(f)
		case "listings":
			if err := json.Unmarshal(v, &k.Listings); err != nil {
				return nil, invalidf("knowledge.listings", "must be true or false")
			}
		default:
			return nil, invalidf("knowledge."+key, "unknown key (knowledge has collectionIds, topK, listings)")
		}
	}
	return json.Marshal(k)
}

// validateFallback checks the fallback answer.
func validateFallback(s *string) error {
	if s != nil && utf8.RuneCountInString(*s) > maxFallback {
		return invalidf("fallback", "at most %d characters", maxFallback)
	}
	return nil
}

// checkCollections refuses knowledge naming a collection that is not the
// organization's: an agent never searches another organization's data.
func (s *Service) checkCollections(ctx context.Context, orgID string, raw json.RawMessage) error {
	if !present(raw) {
		return nil
	}
	k := ParseKnowledge(raw)
	for i, id := range k.CollectionIDs {
		if _, err := s.db.KB.CheckCollection(ctx, orgID, id); err != nil {
			if errors.Is(err, sqldb.ErrNotFound) {
				return invalidf("knowledge.collectionIds."+itoa(i), "collection %q not found", id)
			}
			return err
		}
	}
	return nil
}
