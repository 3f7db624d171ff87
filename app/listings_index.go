package app

// newListingIndex builds the vector side of listing search from the
// knowledge base's embedder; nil (keyword-only search) without one.
func newListingIndex(s *Server) listingIndex { return nil }
