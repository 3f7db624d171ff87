package convert

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// made turns sample into a file with Debian's tools (pandoc; groff and
// ghostscript for PDF), as a user's office suite would.
func made(t *testing.T, ext string) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "in.md")
	if err := os.WriteFile(src, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out."+ext)
	var cmd *exec.Cmd
	switch ext {
	case "pdf":
		need(t, "pandoc", "groff", "ps2pdf")
		cmd = exec.Command("sh", "-c", `pandoc "$1" -t ms | groff -t -ms -Tps > "$2.ps" && ps2pdf "$2.ps" "$2"`, "sh", src, out)
	default:
		need(t, "pandoc")
		cmd = exec.Command("pandoc", src, "-o", out)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making %s: %v\n%s", ext, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func need(t *testing.T, tools ...string) {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s missing in CI", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}

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
			md := convert(t, "clinic."+ext, made(t, ext))
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

// xlsx writes a minimal workbook the way Excel lays it out: a shared
// string table, a sheet with cell references and a gap column.
func xlsx(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	put := func(name, body string) {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	put("[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)
	put("xl/workbook.xml", `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Price list" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	put("xl/_rels/workbook.xml.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="worksheet" Target="worksheets/sheet1.xml"/></Relationships>`)
	put("xl/sharedStrings.xml", `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>Service</t></si><si><t>Price</t></si><si><r><t>Clean</t></r><r><t>ing</t></r></si><si><t>Whitening | pro</t></si></sst>`)
	put("xl/worksheets/sheet1.xml", `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>
<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="s"><v>1</v></c></row>
<row r="2"><c r="A2" t="s"><v>2</v></c><c r="C2"><v>80</v></c></row>
<row r="3"><c r="A3" t="s"><v>3</v></c><c r="C3"><v>250.5</v></c></row>
</sheetData></worksheet>`)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestXLSXAndCSVTables(t *testing.T) {
	md := convert(t, "prices.xlsx", xlsx(t))
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
