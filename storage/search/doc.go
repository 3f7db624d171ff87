// Package search is agentd's in-memory search engine, shared by every
// feature that ranks things (knowledge chunks, listings): one tokenizer,
// BM25 over postings (TextSpace), exact vector search with an int8 coarse
// pass (VectorSpace) and the fusion of a keyword and a semantic ranking
// (FuseScores).
//
// It knows nothing of SQL: the package storage keeps the data in SQLite
// (the source of truth), fills spaces from it and keeps them in step with
// every write; features decide what text and which vectors go in.
package search
