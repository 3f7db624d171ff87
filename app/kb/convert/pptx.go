package convert

import (
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// fromPPTX writes each slide, in the presentation's order, as a heading
// (its title, or "Slide N") followed by its text: paragraphs, bullets
// and tables.
func fromPPTX(data []byte) (string, error) {
	a, err := openArchive(data)
	if err != nil {
		return "", err
	}
	pres, err := a.read("ppt/presentation.xml")
	if err != nil {
		return "", err
	}
	var doc struct {
		IDs []struct {
			RID string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sldIdLst>sldId"`
	}
	if err := xml.Unmarshal(pres, &doc); err != nil {
		return "", errors.New("not a readable PowerPoint file: " + err.Error())
	}
	rels := a.rels("ppt/presentation.xml")
	var b strings.Builder
	for i, id := range doc.IDs {
		raw, err := a.read(rels[id.RID])
		if err != nil {
			return "", err
		}
		if err := slide(raw, i+1, &b); err != nil {
			return "", err
		}
	}
	return collapse(b.String()), nil
}

// slide writes one slide's shapes; a title placeholder's text is its heading.
func slide(raw []byte, n int, b *strings.Builder) error {
	d := newDecoder(raw)
	var title string
	var body strings.Builder
	var para strings.Builder
	var rows [][]string
	var cellText []string
	isTitle, inText, inTable := false, false, false
	level := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return errors.New("not a readable PowerPoint slide: " + err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "sp":
				isTitle = false
			case "ph":
				ty := attr(t, "type")
				isTitle = ty == "title" || ty == "ctrTitle"
			case "tbl":
				inTable, rows = true, nil
			case "tr":
				rows = append(rows, nil)
			case "tc":
				cellText = nil
			case "p":
				para.Reset()
				level = 0
			case "pPr":
				level, _ = strconv.Atoi(attr(t, "lvl"))
			case "t":
				inText = true
			case "br":
				para.WriteString(" ")
			}
		case xml.CharData:
			if inText {
				para.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				text := strings.TrimSpace(para.String())
				switch {
				case text == "":
				case inTable:
					cellText = append(cellText, text)
				case isTitle:
					title = strings.TrimSpace(title + " " + text)
				default:
					body.WriteString(strings.Repeat("  ", level) + "- " + text + "\n")
				}
			case "tc":
				if len(rows) > 0 {
					rows[len(rows)-1] = append(rows[len(rows)-1], strings.Join(cellText, " "))
				}
			case "tbl":
				inTable = false
				body.WriteString("\n")
				writeTable(&body, rows)
			}
		}
	}
	if title == "" {
		title = "Slide " + strconv.Itoa(n)
	}
	b.WriteString("## " + title + "\n\n" + body.String() + "\n")
	return nil
}
