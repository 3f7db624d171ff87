package clean

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/agentd/agentd/internal/errs"
)

// Page reads the limit and offset query parameters into limit and offset
// (left as they are when absent). A value that is not an integer, or a
// limit of 0, is an invalid-field error naming the parameter; maxLimit is
// the upper bound the message states (the caller's options enforce it).
func Page(q url.Values, limit, offset *int, maxLimit int) *errs.Error {
	for _, f := range []struct {
		name string
		dst  *int
	}{{"limit", limit}, {"offset", offset}} {
		v := String(q.Get(f.name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return &errs.Error{Kind: errs.Invalid, Field: f.name, Message: f.name + " must be an integer"}
		}
		if n == 0 && f.name == "limit" {
			return &errs.Error{Kind: errs.Invalid, Field: "limit", Message: fmt.Sprintf("limit must be from 1 to %d", maxLimit)}
		}
		*f.dst = n
	}
	return nil
}

// CheckPage applies the default limit (50) when none was given and checks
// that limit is from 1 to maxLimit and offset is not negative.
func CheckPage(limit *int, offset, maxLimit int) *errs.Error {
	switch {
	case *limit == 0:
		*limit = 50
	case *limit < 1 || *limit > maxLimit:
		return &errs.Error{Kind: errs.Invalid, Field: "limit", Message: fmt.Sprintf("limit must be from 1 to %d", maxLimit)}
	}
	if offset < 0 {
		return &errs.Error{Kind: errs.Invalid, Field: "offset", Message: "offset must be 0 or more"}
	}
	return nil
}
