package convert

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// writeTable writes rows as a Markdown table, the first row its header. Cells
// are one line each (a newline would end the row) with pipes escaped;
// short rows are padded, empty trailing columns dropped.
func writeTable(b *strings.Builder, rows [][]string) {
	width := 0
	for _, r := range rows {
		for i := len(r); i > 0; i-- {
			if strings.TrimSpace(r[i-1]) != "" {
				width = max(width, i)
				break
			}
		}
	}
	if width == 0 {
		return
	}
	line := func(r []string) {
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(r) {
				c = cell(r[i])
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
	for _, r := range rows[1:] {
		line(r)
	}
	b.WriteString("\n")
}

var cellSpace = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ", "|", `\|`)

func cell(s string) string { return strings.Join(strings.Fields(cellSpace.Replace(s)), " ") }

// fromCSV reads comma-, semicolon- or tab-separated values as one table.
func fromCSV(data []byte) (string, error) {
	text, err := fromText(data)
	if err != nil {
		return "", err
	}
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = sniffComma(text)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var rows [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		rows = append(rows, rec)
	}
	var b strings.Builder
	if len(rows) > 0 {
		writeTable(&b, rows)
	}
	return b.String(), nil
}

// sniffComma picks the separator the first line uses most.
func sniffComma(text string) rune {
	first, _, _ := strings.Cut(text, "\n")
	best, n := ',', 0
	for _, c := range []rune{',', ';', '\t'} {
		if k := strings.Count(first, string(c)); k > n {
			best, n = c, k
		}
	}
	return best
}

// collapse joins text runs and trims the blank lines a converter leaves.
func collapse(s string) string {
	lines := strings.Split(s, "\n")
	var out bytes.Buffer
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out.WriteString(l + "\n")
	}
	return out.String()
}
