// Package dnc is the do-not-call list of an organization: numbers added
// and removed through the API, the CLI's import of a file, and the page of
// listed numbers. The calls feature and the dial queue read the list
// through storage; this package owns its input rules.
package dnc

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/clean"
	"github.com/agentd/agentd/internal/errs"
)

// Limits of the list's API.
const (
	MaxPerRequest = 10000 // numbers per POST or DELETE
	maxReason     = 500   // characters
)

// AddRequest is the body of POST /api/v1/dnc.
type AddRequest struct {
	Numbers []string `json:"numbers"`
	Reason  *string  `json:"reason"`
}

// RemoveRequest is the body of DELETE /api/v1/dnc.
type RemoveRequest struct {
	Numbers []string `json:"numbers"`
}

// Added is the outcome of adding numbers.
type Added struct {
	Added         int `json:"added"`         // numbers newly listed
	AlreadyListed int `json:"alreadyListed"` // numbers that were listed already (kept as they were)
	CallsFailed   int `json:"callsFailed"`   // waiting calls to them, failed with do_not_call
}

// Removed is the outcome of removing numbers.
type Removed struct {
	Removed   int `json:"removed"`
	NotListed int `json:"notListed"`
}

// Entry is one listed number.
type Entry struct {
	PhoneNumber string  `json:"phoneNumber"`
	Reason      *string `json:"reason"`
	CreatedAt   string  `json:"createdAt"`
}

// Page is one page of the list, in number order.
type Page struct {
	Numbers    []Entry    `json:"numbers"`
	Pagination Pagination `json:"pagination"`
}

// Pagination says where the page is; total is the true total.
type Pagination struct {
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	HasMore bool `json:"hasMore"`
}

func invalid(field, msg string) *errs.Error {
	return &errs.Error{Kind: errs.Invalid, Field: field, Message: msg}
}

// Number cleans one number (invisible characters, spaces, dots, dashes and
// parentheses go, as on every call endpoint) and checks it is E.164.
func Number(s string) (string, bool) {
	p := clean.Phone(s)
	return p, clean.IsE164(p)
}

// numbers validates a request's numbers (1 to MaxPerRequest, each E.164)
// and returns them cleaned, without repeats.
func numbers(in []string) ([]string, error) {
	switch {
	case in == nil:
		return nil, invalid("numbers", "numbers is required: an array of 1 to 10000 E.164 phone numbers")
	case len(in) == 0:
		return nil, invalid("numbers", "numbers must not be empty (1 to 10000 numbers)")
	case len(in) > MaxPerRequest:
		return nil, invalid("numbers", fmt.Sprintf("numbers has %d numbers; at most %d per request", len(in), MaxPerRequest))
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, s := range in {
		p, ok := Number(s)
		if !ok {
			field := "numbers[" + strconv.Itoa(i) + "]"
			return nil, invalid(field, field+": "+strconv.Quote(s)+" is not an E.164 phone number such as +14155550100")
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// Add lists the request's numbers for the organization; their waiting
// calls fail at once (do_not_call).
func (s *Service) Add(ctx context.Context, orgID string, req AddRequest, now time.Time) (Added, error) {
	nums, err := numbers(req.Numbers)
	if err != nil {
		return Added{}, err
	}
	reason := ""
	if req.Reason != nil {
		reason = clean.String(*req.Reason)
		if utf8.RuneCountInString(reason) > maxReason {
			return Added{}, invalid("reason", fmt.Sprintf("reason is too long (max %d characters)", maxReason))
		}
	}
	added, failed, err := s.db.Calls.AddDNC(ctx, orgID, nums, reason, now)
	if err != nil {
		return Added{}, err
	}
	return Added{Added: added, AlreadyListed: len(nums) - added, CallsFailed: failed}, nil
}

// Remove takes the request's numbers off the organization's list.
func (s *Service) Remove(ctx context.Context, orgID string, req RemoveRequest) (Removed, error) {
	nums, err := numbers(req.Numbers)
	if err != nil {
		return Removed{}, err
	}
	n, err := s.db.Calls.RemoveDNC(ctx, orgID, nums)
	if err != nil {
		return Removed{}, err
	}
	return Removed{Removed: n, NotListed: len(nums) - n}, nil
}

// ListOptions page the list; PhoneNumber looks one number up.
type ListOptions struct {
	PhoneNumber string
	Limit       int // default 50, max 1000
	Offset      int
}

// ParseQuery reads the list options of GET /api/v1/dnc.
func ParseQuery(q url.Values) (ListOptions, error) {
	phone := q.Get("phoneNumber")
	if strings.HasPrefix(phone, " ") {
		phone = "+" + phone[1:] // a "+" the client forgot to escape arrives as a space
	}
	o := ListOptions{PhoneNumber: clean.String(phone)}
	if err := clean.Page(q, &o.Limit, &o.Offset, 1000); err != nil {
		return o, err
	}
	return o, nil
}

// List returns one page of the organization's list.
func (s *Service) List(ctx context.Context, orgID string, o ListOptions) (Page, error) {
	if err := clean.CheckPage(&o.Limit, o.Offset, 1000); err != nil {
		return Page{}, err
	}
	if o.PhoneNumber != "" {
		p, ok := Number(o.PhoneNumber)
		if !ok {
			return Page{}, invalid("phoneNumber", "phoneNumber must be an E.164 phone number such as +14155550100")
		}
		o.PhoneNumber = p
	}
	es, total, err := s.db.Calls.ListDNC(ctx, orgID, o.PhoneNumber, o.Limit, o.Offset)
	if err != nil {
		return Page{}, err
	}
	page := Page{Numbers: make([]Entry, len(es)),
		Pagination: Pagination{Total: total, Limit: o.Limit, Offset: o.Offset, HasMore: o.Offset+len(es) < total}}
	for i, e := range es {
		page.Numbers[i] = Entry{PhoneNumber: e.PhoneNumber, CreatedAt: apitime.Format(e.CreatedAt)}
		if e.Reason != "" {
			r := e.Reason
			page.Numbers[i].Reason = &r
		}
	}
	return page, nil
}
