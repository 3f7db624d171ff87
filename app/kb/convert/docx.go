package convert

import (
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// fromDOCX reads word/document.xml: paragraphs with a heading style become
// headings, numbered or bulleted paragraphs list items, tables Markdown
// tables (a cell's paragraphs joined on one line).
func fromDOCX(data []byte) (string, error) {
	a, err := openArchive(data)
	if err != nil {
		return "", err
	}
	doc, err := a.read("word/document.xml")
	if err != nil {
		return "", err
	}
	styles := headingStyles(a)
	var b strings.Builder
	w := docxWalker{styles: styles}
	if err := w.walk(newDecoder(doc), &b); err != nil {
		return "", err
	}
	return collapse(b.String()), nil
}

var headingName = regexp.MustCompile(`(?i)^(?:heading|berschrift|titre|título|titolo)\s*(\d)$`)

// headingStyles maps style ids to heading levels (Title is 1), by the
// style's name in word/styles.xml and by the id itself ("Heading2").
func headingStyles(a *archive) map[string]int {
	out := map[string]int{"Title": 1}
	b, err := a.read("word/styles.xml")
	if err != nil {
		return out
	}
	var doc struct {
		Style []struct {
			ID   string `xml:"styleId,attr"`
			Name struct {
				Val string `xml:"val,attr"`
			} `xml:"name"`
		} `xml:"style"`
	}
	if xml.Unmarshal(b, &doc) != nil {
		return out
	}
	for _, s := range doc.Style {
		if m := headingName.FindStringSubmatch(s.Name.Val); m != nil {
			out[s.ID], _ = strconv.Atoi(m[1])
		} else if strings.EqualFold(s.Name.Val, "title") {
			out[s.ID] = 1
		}
	}
	return out
}

type docxWalker struct {
	styles map[string]int
}

// paragraph is one w:p as it is read.
type paragraph struct {
	text    strings.Builder
	heading int
	list    int // 1 + nesting level when a list item
}

func (w docxWalker) walk(d *xml.Decoder, b *strings.Builder) error {
	var p *paragraph
	var rows [][]string // the table being read (outermost only)
	var cellText []string
	depth := 0 // table nesting
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errors.New("not a readable Word document: " + err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "tbl":
				depth++
				if depth == 1 {
					rows = nil
				}
			case "tr":
				if depth == 1 {
					rows = append(rows, nil)
				}
			case "tc":
				if depth == 1 {
					cellText = nil
				}
			case "p":
				p = &paragraph{}
			case "pStyle":
				if p != nil {
					p.heading = w.styles[attr(t, "val")]
				}
			case "ilvl":
				if p != nil {
					n, _ := strconv.Atoi(attr(t, "val"))
					p.list = n + 1
				}
			case "numPr":
				if p != nil && p.list == 0 {
					p.list = 1
				}
			case "t":
				inText = true
			case "tab":
				if p != nil {
					p.text.WriteString(" ")
				}
			case "br", "cr":
				if p != nil {
					p.text.WriteString(" ")
				}
			}
		case xml.CharData:
			if inText && p != nil {
				p.text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				if p == nil {
					continue
				}
				text := strings.TrimSpace(p.text.String())
				switch {
				case depth > 0:
					if text != "" {
						cellText = append(cellText, text)
					}
				case text == "":
				case p.heading > 0:
					b.WriteString("\n" + strings.Repeat("#", min(p.heading, 6)) + " " + text + "\n\n")
				case p.list > 0:
					b.WriteString(strings.Repeat("  ", p.list-1) + "- " + text + "\n")
				default:
					b.WriteString("\n" + text + "\n\n")
				}
				p = nil
			case "tc":
				if depth == 1 && len(rows) > 0 {
					rows[len(rows)-1] = append(rows[len(rows)-1], strings.Join(cellText, " "))
				}
			case "tbl":
				depth--
				if depth == 0 && len(rows) > 0 {
					b.WriteString("\n")
					writeTable(b, rows)
				}
			}
		}
	}
}
