package listings

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// ImportRecord is one listing read from a file, before validation.
type ImportRecord struct {
	Line int             // 1-based line where the item starts
	Raw  json.RawMessage // the item as a JSON object
	Err  string          // a problem found while reading (the row is invalid)
}

// maxReadErrors stops reading a hopeless file early.
const maxReadErrors = 1000

var bom = []byte{0xEF, 0xBB, 0xBF}

// ReadFile reads listings from r in the format named by the file's
// extension: .json (an array, or an object with "listings"), .jsonl or
// .ndjson (one object per line) and .csv (a header row; known columns map
// to fields, every other column becomes an attribute). A file that cannot
// be read as its format at all is an error with its line; a single bad
// line or row is a record with Err set.
func ReadFile(name string, r io.Reader) ([]ImportRecord, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return readListingJSON(r)
	case ".jsonl", ".ndjson":
		return readListingNDJSON(r)
	case ".csv":
		return readListingCSV(r)
	}
	return nil, fmt.Errorf("%s: unknown format (want .json, .jsonl, .ndjson or .csv)", name)
}

// lineAt is the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func readListingJSON(r io.Reader) ([]ImportRecord, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, bom)
	if !utf8.Valid(data) {
		return nil, errors.New("file is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("line %d: malformed JSON: %v", lineAt(data, se.Offset), se)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("line %d: malformed JSON: unexpected end of file", lineAt(data, int64(len(data))))
		}
		return fmt.Errorf("line %d: %v", lineAt(data, dec.InputOffset()), err)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fail(err)
	}
	if tok == json.Delim('{') {
		// An object: find its "listings" array, skip the other members.
		for {
			k, err := dec.Token()
			if err != nil {
				return nil, fail(err)
			}
			if k == json.Delim('}') {
				return nil, errors.New(`the JSON object has no "listings" array`)
			}
			if k == "listings" {
				if tok, err = dec.Token(); err != nil {
					return nil, fail(err)
				}
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fail(err)
			}
		}
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("line %d: want an array of listings or an object with \"listings\"", lineAt(data, dec.InputOffset()))
	}
	var out []ImportRecord
	for dec.More() {
		start := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fail(err)
		}
		// The offset is before the separator and blanks: count from the value.
		line := lineAt(data, start+int64(bytes.Index(data[start:], raw[:1])))
		rec := ImportRecord{Line: line, Raw: raw}
		if raw[0] != '{' {
			rec.Err = "not a JSON object"
		}
		out = append(out, rec)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fail(err)
	}
	return out, nil
}

func readListingNDJSON(r io.Reader) ([]ImportRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	var out []ImportRecord
	errs := 0
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, bom)
		}
		if len(b) == 0 {
			continue
		}
		rec := ImportRecord{Line: line, Raw: json.RawMessage(bytes.Clone(b))}
		switch {
		case !utf8.Valid(b):
			rec.Err = "not valid UTF-8"
		case b[0] != '{' || !json.Valid(b):
			rec.Err = "not a JSON object"
		}
		if rec.Err != "" {
			rec.Raw = nil
			if errs++; errs > maxReadErrors {
				return nil, fmt.Errorf("line %d: more than %d unreadable lines, giving up", line, maxReadErrors)
			}
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after line %d: %w", len(out), err)
	}
	return out, nil
}

// csvField maps a normalised CSV header to a listing field.
var csvField = map[string]string{
	"externalid": "externalId", "external_id": "externalId", "id": "externalId", "sku": "externalId",
	"title": "title", "name": "title",
	"description": "description",
	"category":    "category",
	"price":       "price",
	"currency":    "currency",
	"sourceurl":   "sourceUrl", "source_url": "sourceUrl", "url": "sourceUrl",
}

func readListingCSV(r io.Reader) ([]ImportRecord, error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, bom) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("the CSV file is empty")
	}
	if err != nil {
		return nil, fmt.Errorf("CSV header: %w", err)
	}
	cols := make([]string, len(header)) // field name, or "attr:<key>"
	have := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if !utf8.ValidString(h) {
			return nil, fmt.Errorf("line 1: column %d: header is not valid UTF-8", i+1)
		}
		key := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(h, "-", "_"), " ", "_"))
		switch {
		case csvField[key] != "":
			cols[i] = csvField[key]
		case strings.HasPrefix(key, "attr.") || strings.HasPrefix(key, "attributes."):
			_, k, _ := strings.Cut(h, ".")
			cols[i] = "attr:" + k
		case h == "":
			cols[i] = ""
		default:
			cols[i] = "attr:" + h
		}
		if cols[i] != "" && have[cols[i]] {
			return nil, fmt.Errorf("line 1: column %q appears twice", h)
		}
		have[cols[i]] = true
	}
	for _, need := range []string{"externalId", "title"} {
		if !have[need] {
			return nil, fmt.Errorf("line 1: the CSV header has no %s column", need)
		}
	}
	var out []ImportRecord
	errs := 0
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		rec := ImportRecord{}
		if err == nil && len(row) > 0 {
			rec.Line, _ = cr.FieldPos(0)
		}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			rec.Line, rec.Err = pe.StartLine, "malformed CSV: "+pe.Err.Error()
		case err != nil:
			return nil, err
		case len(row) != len(header):
			rec.Err = fmt.Sprintf("row has %d cells, the header %d", len(row), len(header))
		default:
			rec.Raw, rec.Err = csvRecord(cols, row)
		}
		if rec.Err != "" {
			if errs++; errs > maxReadErrors {
				return nil, fmt.Errorf("line %d: more than %d unreadable rows, giving up", rec.Line, maxReadErrors)
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

// csvRecord turns one CSV row into a listing object; empty cells are absent.
func csvRecord(cols, row []string) (json.RawMessage, string) {
	obj := map[string]any{}
	attrs := map[string]any{}
	for i, cell := range row {
		if !utf8.ValidString(cell) {
			return nil, fmt.Sprintf("cell %d is not valid UTF-8", i+1)
		}
		cell = strings.TrimSpace(cell)
		if cell == "" || cols[i] == "" {
			continue
		}
		switch c := cols[i]; {
		case strings.HasPrefix(c, "attr:"):
			attrs[strings.TrimPrefix(c, "attr:")] = cell
		case c == "price" && isJSONNumber(json.RawMessage(cell)) && json.Valid([]byte(cell)):
			obj[c] = json.Number(cell)
		default:
			obj[c] = cell
		}
	}
	if len(attrs) > 0 {
		obj["attributes"] = attrs
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, "cannot be encoded: " + err.Error()
	}
	return b, ""
}
