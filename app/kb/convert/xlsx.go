package convert

import (
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Bounds of a sheet read into a table.
const (
	maxSheetRows = 20_000
	maxSheetCols = 256
)

// fromXLSX writes each sheet as a heading and a Markdown table, its first
// row the header, values as Excel stored them (shared and inline strings
// resolved; numbers as written).
func fromXLSX(data []byte) (string, error) {
	a, err := openArchive(data)
	if err != nil {
		return "", err
	}
	wb, err := a.read("xl/workbook.xml")
	if err != nil {
		return "", err
	}
	var book struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	if err := xml.Unmarshal(wb, &book); err != nil {
		return "", errors.New("not a readable Excel workbook: " + err.Error())
	}
	rels := a.rels("xl/workbook.xml")
	shared := sharedStrings(a)
	var b strings.Builder
	for i, sh := range book.Sheets {
		part := rels[sh.RID]
		if part == "" {
			part = "xl/worksheets/sheet" + strconv.Itoa(i+1) + ".xml"
		}
		raw, err := a.read(part)
		if err != nil {
			return "", err
		}
		rows, err := sheetRows(raw, shared)
		if err != nil {
			return "", err
		}
		if len(rows) == 0 {
			continue
		}
		b.WriteString("## " + cell(sh.Name) + "\n\n")
		writeTable(&b, rows)
	}
	return b.String(), nil
}

func sharedStrings(a *archive) []string {
	raw, err := a.read("xl/sharedStrings.xml")
	if err != nil {
		return nil
	}
	var out []string
	var cur strings.Builder
	in := false
	d := newDecoder(raw)
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				cur.Reset()
			case "t":
				in = true
			case "rPh": // phonetic hints are not the text
				d.Skip()
			}
		case xml.CharData:
			if in {
				cur.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				in = false
			case "si":
				out = append(out, cur.String())
			}
		}
	}
}

// sheetRows reads a worksheet into rows of cells placed by their
// references (A1, C7), so empty cells keep their columns.
func sheetRows(raw []byte, shared []string) ([][]string, error) {
	var rows [][]string
	d := newDecoder(raw)
	var typ, ref string
	var val strings.Builder
	in := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, errors.New("not a readable Excel sheet: " + err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				if len(rows) >= maxSheetRows {
					return nil, tooLarge("sheet rows", maxSheetRows)
				}
				rows = append(rows, nil)
			case "c":
				typ, ref = attr(t, "t"), attr(t, "r")
				val.Reset()
			case "v", "t":
				in = true
			}
		case xml.CharData:
			if in {
				val.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v", "t":
				in = false
			case "c":
				if len(rows) == 0 {
					continue
				}
				v := val.String()
				switch typ {
				case "s":
					if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 && n < len(shared) {
						v = shared[n]
					}
				case "b":
					v = map[string]string{"1": "TRUE", "0": "FALSE"}[v]
				}
				r := &rows[len(rows)-1]
				col := column(ref, len(*r))
				if col >= maxSheetCols {
					continue
				}
				for len(*r) < col {
					*r = append(*r, "")
				}
				*r = append(*r, v)
			}
		}
	}
}

// column is the zero-based column of a cell reference ("C7" is 2), or
// next when the reference is missing.
func column(ref string, next int) int {
	n := 0
	for _, c := range ref {
		if c < 'A' || c > 'Z' {
			break
		}
		n = n*26 + int(c-'A'+1)
		if n > maxSheetCols {
			return maxSheetCols
		}
	}
	if n == 0 || n-1 < next {
		return next
	}
	return n - 1
}
