// Package doctest makes real office files for tests from Markdown, with
// the tools Debian ships (pandoc; groff and ghostscript for PDF), and a
// minimal XLSX laid out as Excel writes one.
package doctest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Make turns Markdown into a file of the given extension: docx, html,
// pptx (pandoc) or pdf (pandoc to ms, groff with tbl, ps2pdf). Missing
// tools skip the test, except in CI, where they fail it.
func Make(t testing.TB, markdown, ext string) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "in.md")
	if err := os.WriteFile(src, []byte(markdown), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out."+ext)
	var cmd *exec.Cmd
	if ext == "pdf" {
		Need(t, "pandoc", "groff", "ps2pdf")
		cmd = exec.Command("sh", "-c", `pandoc "$1" -t ms | groff -t -ms -Tps > "$2.ps" && ps2pdf "$2.ps" "$2"`, "sh", src, out)
	} else {
		Need(t, "pandoc")
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

// Need skips the test when a tool is missing (fails it in CI).
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s missing in CI", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}

// XLSX is a workbook of one sheet: rows of strings (shared strings) and
// numbers (cells that parse as numbers), with cell references as Excel
// writes them.
func XLSX(t testing.TB, sheet string, rows [][]string) []byte {
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
	var shared []string
	var data strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&data, `<row r="%d">`, i+1)
		for j, c := range r {
			if c == "" {
				continue
			}
			ref := fmt.Sprintf("%c%d", 'A'+j, i+1)
			var f float64
			if _, err := fmt.Sscan(c, &f); err == nil && !strings.ContainsAny(c, " \t") {
				fmt.Fprintf(&data, `<c r="%s"><v>%s</v></c>`, ref, c)
				continue
			}
			shared = append(shared, c)
			fmt.Fprintf(&data, `<c r="%s" t="s"><v>%d</v></c>`, ref, len(shared)-1)
		}
		data.WriteString(`</row>`)
	}
	var sst strings.Builder
	for _, s := range shared {
		var esc bytes.Buffer
		xmlEscape(&esc, s)
		sst.WriteString("<si><t>" + esc.String() + "</t></si>")
	}
	var name bytes.Buffer
	xmlEscape(&name, sheet)
	put("[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`)
	put("xl/workbook.xml", `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="`+name.String()+`" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	put("xl/_rels/workbook.xml.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="worksheet" Target="worksheets/sheet1.xml"/></Relationships>`)
	put("xl/sharedStrings.xml", `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`+sst.String()+`</sst>`)
	put("xl/worksheets/sheet1.xml", `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`+data.String()+`</sheetData></worksheet>`)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xmlEscape(b *bytes.Buffer, s string) {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	b.WriteString(r.Replace(s))
}
