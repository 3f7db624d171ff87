package kb

// Page is offset paging of the knowledge lists (collections, sources).
type Page struct {
	Limit  int
	Offset int
}

// Pagination is what a list response says about its page, so a client knows
// whether to ask for the next one.
type Pagination struct {
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
}

// Of is the pagination of this page over total items.
func (p Page) Of(total int) Pagination {
	return Pagination{Total: total, Limit: p.Limit, Offset: p.Offset, HasMore: p.Offset+p.Limit < total}
}

// ParsePage reads the limit (default 50, 1-100) and offset (default 0)
// query parameters as given ("" when absent).
func ParsePage(limit, offset string) (Page, error) {
	p := Page{Limit: 50}
	if limit != "" {
		n, ok := atoi(limit)
		if !ok || n < 1 || n > 100 {
			return Page{}, invalid("limit", "limit must be an integer between 1 and 100")
		}
		p.Limit = n
	}
	if offset != "" {
		n, ok := atoi(offset)
		if !ok || n < 0 {
			return Page{}, invalid("offset", "offset must be a non-negative integer")
		}
		p.Offset = n
	}
	return p, nil
}

// atoi parses a small non-negative decimal integer (no sign, no spaces).
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
