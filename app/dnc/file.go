package dnc

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// A do-not-call file for `agentd dnc import`: one number per line, or CSV.
// A CSV whose first row names a phone column (phone, phoneNumber,
// phone_number, number, contactPhone, any case) is read by that column,
// with an optional reason column; a CSV without such a header is read by
// its first column. Blank lines and lines starting with # are skipped.

// Line is one number read from a file.
type Line struct {
	Line   int // 1-based line of the file
	Number string
	Reason string
}

// Problem is a line that holds no valid number.
type Problem struct {
	Line  int    `json:"line"`
	Value string `json:"value"`
	Error string `json:"error"`
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Error) }

// maxLine bounds a line of a do-not-call file.
const maxLine = 64 << 10

var phoneHeaders = map[string]bool{"phone": true, "phonenumber": true, "phone_number": true, "number": true,
	"contactphone": true, "contact_phone": true, "msisdn": true, "e164": true}

// Read reads a do-not-call file: the valid numbers in file order (each
// number once, its first line kept) and the lines that hold none.
func Read(r io.Reader) ([]Line, []Problem, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var lines []Line
	var problems []Problem
	seen := map[string]bool{}
	phoneCol, reasonCol := -1, -1
	csvMode := false
	n := 0
	for {
		raw, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, err
		}
		if raw == "" && err != nil {
			break
		}
		n++
		if len(raw) > maxLine {
			problems = append(problems, Problem{Line: n, Value: strings.ToValidUTF8(raw[:40], "?") + "...", Error: "line too long"})
			continue
		}
		text := strings.TrimSpace(strings.TrimPrefix(raw, "\ufeff"))
		if !utf8.ValidString(text) {
			problems = append(problems, Problem{Line: n, Value: strings.ToValidUTF8(text, "?"), Error: "not UTF-8 text"})
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := []string{text}
		if strings.ContainsAny(text, ",;\t") {
			fields = splitCSV(text)
			if !csvMode {
				csvMode = true
				if c, rc := header(fields); c >= 0 {
					phoneCol, reasonCol = c, rc
					continue
				}
				phoneCol = 0
			}
		} else if n == 1 && phoneHeaders[strings.ToLower(text)] {
			continue // a one-column file's header
		}
		col := max(phoneCol, 0)
		if col >= len(fields) {
			problems = append(problems, Problem{Line: n, Value: text, Error: "no phone column on this line"})
			continue
		}
		value := strings.TrimSpace(fields[col])
		p, ok := Number(value)
		if !ok {
			problems = append(problems, Problem{Line: n, Value: value, Error: fmt.Sprintf("%q is not an E.164 phone number such as +14155550100", value)})
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		l := Line{Line: n, Number: p}
		if reasonCol >= 0 && reasonCol < len(fields) {
			l.Reason = strings.TrimSpace(fields[reasonCol])
			if utf8.RuneCountInString(l.Reason) > maxReason {
				l.Reason = string([]rune(l.Reason)[:maxReason])
			}
		}
		lines = append(lines, l)
	}
	return lines, problems, nil
}

// splitCSV splits one CSV line (quotes honoured; , ; or tab separated).
func splitCSV(text string) []string {
	sep := ','
	if !strings.ContainsRune(text, ',') {
		sep = ';'
		if !strings.ContainsRune(text, ';') {
			sep = '\t'
		}
	}
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma, cr.LazyQuotes, cr.FieldsPerRecord = sep, true, -1
	rec, err := cr.Read()
	if err != nil {
		return strings.Split(text, string(sep))
	}
	return rec
}

// header finds the phone and reason columns of a header row (-1 when the
// row is not a header).
func header(fields []string) (phone, reason int) {
	phone, reason = -1, -1
	for i, f := range fields {
		k := strings.ToLower(strings.TrimSpace(f))
		switch {
		case phoneHeaders[k] && phone < 0:
			phone = i
		case k == "reason" || k == "note" || k == "notes":
			reason = i
		}
	}
	return phone, reason
}

// ImportChunk is how many numbers one transaction of an import lists.
const ImportChunk = 20000

// Import lists the numbers of a file (Read) for the organization in
// chunks, calling progress with the numbers done so far. reason applies to
// lines without their own.
func (s *Service) Import(ctx context.Context, orgID string, lines []Line, reason string, progress func(done int)) (Added, error) {
	var total Added
	now := time.Now().UTC()
	for lo := 0; lo < len(lines); lo += ImportChunk {
		part := lines[lo:min(lo+ImportChunk, len(lines))]
		// Numbers with their own reason go in groups of one reason.
		byReason := map[string][]string{}
		var order []string
		for _, l := range part {
			r := l.Reason
			if r == "" {
				r = reason
			}
			if _, ok := byReason[r]; !ok {
				order = append(order, r)
			}
			byReason[r] = append(byReason[r], l.Number)
		}
		for _, r := range order {
			added, failed, err := s.db.Calls.AddDNC(ctx, orgID, byReason[r], r, now)
			if err != nil {
				return total, err
			}
			total.Added += added
			total.AlreadyListed += len(byReason[r]) - added
			total.CallsFailed += failed
		}
		if progress != nil {
			progress(lo + len(part))
		}
	}
	return total, nil
}
