package storage

import "github.com/agentd/agentd/storage/search"

// RRFK is search.RRFK.
//
// Deprecated: use search.RRFK; kept so callers written before
// storage/search build until they move.
const RRFK = search.RRFK

// FuseRRF is search.FuseRRF.
//
// Deprecated: use search.FuseRRF; kept so callers written before
// storage/search build until they move.
func FuseRRF(k float64, lists ...[]int64) []search.Fused { return search.FuseRRF(k, lists...) }
