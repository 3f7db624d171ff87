// Package convert turns uploaded files and fetched web pages into Markdown,
// the one stored form of knowledge: headings, lists and tables survive (a
// table becomes a Markdown table, which the chunker never splits inside a
// row). Pure: bytes in, Markdown out, every read bounded.
package convert

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Bounds on a conversion. A file past MaxFileBytes, or whose Markdown
// passes MaxMarkdownBytes, is refused; Office files are zip archives whose
// entries are read at most MaxUnzippedBytes in all, MaxZipEntries of them.
const (
	MaxFileBytes     = 20 << 20
	MaxMarkdownBytes = 512_000 // a source's content limit (API.md "Limits")
	MaxUnzippedBytes = 64 << 20
	MaxZipEntries    = 10_000
	MaxPDFPages      = 500
)

// Formats the converter reads.
const (
	PDF      = "pdf"
	DOCX     = "docx"
	XLSX     = "xlsx"
	PPTX     = "pptx"
	HTML     = "html"
	Text     = "text"
	Markdown = "markdown"
	CSV      = "csv"
)

// Errors of a conversion; the knowledge base answers the first four with a
// 4xx naming the problem, and records any other as the source's failure.
var (
	ErrUnsupported = errors.New("unsupported file type")
	ErrEncrypted   = errors.New("the file is encrypted or password-protected")
	ErrTooLarge    = errors.New("file too large")
	ErrEmpty       = errors.New("no text found in the file")
)

// TooLarge says which bound a file passed.
func tooLarge(what string, limit int) error {
	return fmt.Errorf("%w: %s over %d bytes", ErrTooLarge, what, limit)
}

// Detect names a file's format from its name, its declared content type
// and its first bytes (the bytes win over a wrong name: a PDF called
// .txt is read as a PDF). "" when none fits.
func Detect(name, contentType string, data []byte) string {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return PDF
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		switch ext {
		case "docx", "xlsx", "pptx":
			return ext
		}
		return officeKind(data)
	}
	switch ext {
	case "html", "htm", "xhtml":
		return HTML
	case "md", "markdown":
		return Markdown
	case "csv":
		return CSV
	case "txt", "text":
		return Text
	}
	switch ct {
	case "text/html", "application/xhtml+xml":
		return HTML
	case "text/markdown", "text/x-markdown":
		return Markdown
	case "text/csv":
		return CSV
	case "text/plain":
		return Text
	}
	if looksLikeHTML(data) {
		return HTML
	}
	if ext == "" && utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		return Text
	}
	return ""
}

func looksLikeHTML(data []byte) bool {
	head := strings.ToLower(string(data[:min(len(data), 512)]))
	head = strings.TrimSpace(strings.TrimPrefix(head, "\ufeff"))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

// ToMarkdown converts data of the given format (Detect) to Markdown.
func ToMarkdown(format string, data []byte) (string, error) { return ToMarkdownAt(format, data, "") }

// ToMarkdownAt is ToMarkdown for a document fetched from base: an HTML
// page's relative links are made absolute against it.
func ToMarkdownAt(format string, data []byte, base string) (string, error) {
	if len(data) > MaxFileBytes {
		return "", tooLarge("file", MaxFileBytes)
	}
	if bytes.HasPrefix(data, []byte("\xd0\xcf\x11\xe0")) {
		// An OLE container: an encrypted Office file (or a legacy .doc/.xls).
		return "", fmt.Errorf("%w (or a legacy Office format: save it as .docx, .xlsx or .pptx)", ErrEncrypted)
	}
	var md string
	var err error
	switch format {
	case PDF:
		md, err = fromPDF(data)
	case DOCX:
		md, err = fromDOCX(data)
	case XLSX:
		md, err = fromXLSX(data)
	case PPTX:
		md, err = fromPPTX(data)
	case HTML:
		md, err = FromHTML(data, base)
	case CSV:
		md, err = fromCSV(data)
	case Text, Markdown:
		md, err = fromText(data)
	default:
		return "", ErrUnsupported
	}
	if err != nil {
		return "", err
	}
	md = strings.TrimSpace(md)
	if md == "" {
		return "", ErrEmpty
	}
	if len(md) > MaxMarkdownBytes {
		return "", tooLarge("converted Markdown", MaxMarkdownBytes)
	}
	return md + "\n", nil
}

// fromText keeps text and Markdown as they are, once they are UTF-8.
func fromText(data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) || bytes.ContainsRune(data, 0) {
		return "", fmt.Errorf("%w: text is not UTF-8", ErrUnsupported)
	}
	return string(data), nil
}
