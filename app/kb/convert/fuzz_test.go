package convert

import (
	"errors"
	"testing"
	"time"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// FuzzToMarkdown feeds any bytes to every converter: none may panic, and
// each answers within a bound (a file of the fuzz size is tiny).
func FuzzToMarkdown(f *testing.F) {
	f.Add("a.csv", []byte("a,b\n1,2\n"))
	f.Add("a.html", []byte("<table><tr><td>x</td></tr></table>"))
	f.Add("a.pdf", []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF"))
	f.Add("a.docx", []byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		start := time.Now()
		for _, format := range []string{Detect(name, "", data), PDF, DOCX, XLSX, PPTX, HTML, CSV, Text} {
			md, err := ToMarkdown(format, data)
			if err == nil && len(md) > MaxMarkdownBytes+1 {
				t.Fatalf("%s: %d bytes of Markdown", format, len(md))
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}
