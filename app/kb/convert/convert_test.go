package convert

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/doctest"
)

// sample is the Markdown every made file starts from: a heading, a
// paragraph, a table and a list.
const sample = `# Opening hours

The clinic opens at 8 am on weekdays.

## Prices

| Service | Price |
|---------|-------|
| Cleaning | 80 EUR |
| Whitening | 250 EUR |

- Bring your insurance card
- Arrive ten minutes early
`

func convert(t *testing.T, name string, data []byte) string {
	t.Helper()
	f := Detect(name, "", data)
	md, err := ToMarkdown(f, data)
	if err != nil {
		t.Fatalf("%s (%s): %v", name, f, err)
	}
	return md
}

func mustContain(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(md, w) {
			t.Errorf("missing %q in:\n%s", w, md)
		}
	}
}

func TestMadeFilesKeepStructure(t *testing.T) {
	for _, ext := range []string{"docx", "html", "pptx", "pdf"} {
		t.Run(ext, func(t *testing.T) {
			md := convert(t, "clinic."+ext, doctest.Make(t, sample, ext))
			mustContain(t, md, "Opening hours", "The clinic opens at 8 am on weekdays.", "Prices")
			switch ext {
			case "pptx": // pandoc puts each heading on a slide; the table stays a table
				mustContain(t, md, "| Cleaning | 80 EUR |", "Bring your insurance card")
			default:
				mustContain(t, md, "| Service | Price |", "| Cleaning | 80 EUR |", "| Whitening | 250 EUR |",
					"- Bring your insurance card", "- Arrive ten minutes early")
			}
			if ext != "pptx" {
				mustContain(t, md, "Opening hours\n")
				if !strings.Contains(md, "# Opening hours") {
					t.Errorf("heading lost:\n%s", md)
				}
			}
		})
	}
}

func TestXLSXAndCSVTables(t *testing.T) {
	md := convert(t, "prices.xlsx", doctest.XLSX(t, "Price list", [][]string{{"Service", "", "Price"}, {"Cleaning", "", "80"}, {"Whitening | pro", "", "250.5"}}))
	mustContain(t, md, "## Price list", "| Service |  | Price |", "| Cleaning |  | 80 |", `| Whitening \| pro |  | 250.5 |`)
	md = convert(t, "prices.csv", []byte("Service;Price\nCleaning;80\n\"Whitening; pro\";250\n"))
	mustContain(t, md, "| Service | Price |", "| --- | --- |", "| Cleaning | 80 |", "| Whitening; pro | 250 |")
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"old.doc", []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 rest"), ErrEncrypted},
		{"locked.pdf", []byte("%PDF-1.7\n1 0 obj << >> endobj trailer << /Encrypt 5 0 R >>"), ErrEncrypted},
		{"image.png", []byte("\x89PNG\r\n\x1a\n\x00\x00"), ErrUnsupported},
		{"empty.txt", []byte("   \n"), ErrEmpty},
		{"big.txt", bytes.Repeat([]byte("a"), MaxMarkdownBytes+10), ErrTooLarge},
	}
	for _, c := range cases {
		_, err := ToMarkdown(Detect(c.name, "", c.data), c.data)
		if !errorsIs(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestZipBombRefused(t *testing.T) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.Create("word/document.xml")
	chunk := bytes.Repeat([]byte("<w:p><w:r><w:t>aaaaaaaa</w:t></w:r></w:p>"), 1<<14)
	for range (MaxUnzippedBytes / len(chunk)) + 2 {
		w.Write(chunk)
	}
	z.Close()
	if buf.Len() > MaxFileBytes {
		t.Skip("bomb too big to be an upload")
	}
	_, err := ToMarkdown(DOCX, buf.Bytes())
	if !errorsIs(err, ErrTooLarge) {
		t.Fatalf("got %v, want too large", err)
	}
}
