package convert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/testkit/doctest"
)

// longDoc is sample repeated under numbered sections: about one printed
// page a section.
func longDoc(sections int) string {
	var b strings.Builder
	for i := range sections {
		fmt.Fprintf(&b, "# Section %d\n\n", i+1)
		for range 6 {
			b.WriteString("The clinic opens at 8 am on weekdays and closes at 6 pm; on Saturdays it opens for emergencies only, " +
				"and appointments can be made by phone, online or at the front desk.\n\n")
		}
		b.WriteString(strings.TrimPrefix(sample, "# Opening hours\n\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarkConvert converts files made from a 40-section document (20 A4
// pages as groff sets the PDF; the same text in each format) and reports
// printed pages per second and MB/s.
//
//	go test ./app/kb/convert -run '^$' -bench Convert -benchtime 20x
func BenchmarkConvert(b *testing.B) {
	const sections, pages = 40, 20
	md := longDoc(sections)
	for _, ext := range []string{"pdf", "docx", "html", "pptx"} {
		data := doctest.Make(b, md, ext)
		format := Detect("doc."+ext, "", data)
		b.Run(ext, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ToMarkdown(format, data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(pages)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}
