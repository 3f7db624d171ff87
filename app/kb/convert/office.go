package convert

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"
)

// archive is an Office file's zip, read within MaxUnzippedBytes in all.
type archive struct {
	files  map[string]*zip.File
	budget int64
}

func openArchive(data []byte) (*archive, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a readable Office file: %w", err)
	}
	if len(zr.File) > MaxZipEntries {
		return nil, tooLarge("archive entries", MaxZipEntries)
	}
	a := &archive{files: map[string]*zip.File{}, budget: MaxUnzippedBytes}
	for _, f := range zr.File {
		a.files[f.Name] = f
	}
	if _, ok := a.files["EncryptionInfo"]; ok {
		return nil, ErrEncrypted
	}
	return a, nil
}

// officeKind tells a docx, xlsx or pptx by the part it holds.
func officeKind(data []byte) string {
	a, err := openArchive(data)
	if err != nil {
		return ""
	}
	switch {
	case a.files["word/document.xml"] != nil:
		return DOCX
	case a.files["xl/workbook.xml"] != nil:
		return XLSX
	case a.files["ppt/presentation.xml"] != nil:
		return PPTX
	}
	return ""
}

// read returns one part, charged to the archive's budget.
func (a *archive) read(name string) ([]byte, error) {
	f := a.files[name]
	if f == nil {
		return nil, fmt.Errorf("not a readable Office file: %s is missing", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, a.budget+1))
	if err != nil {
		return nil, fmt.Errorf("not a readable Office file: %w", err)
	}
	a.budget -= int64(len(b))
	if a.budget < 0 {
		return nil, tooLarge("unzipped content", MaxUnzippedBytes)
	}
	return b, nil
}

// rels maps a part's relationship ids to the parts they name.
func (a *archive) rels(part string) map[string]string {
	dir, file := path.Split(part)
	b, err := a.read(dir + "_rels/" + file + ".rels")
	if err != nil {
		return nil
	}
	var doc struct {
		Rel []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if xml.Unmarshal(b, &doc) != nil {
		return nil
	}
	out := map[string]string{}
	for _, r := range doc.Rel {
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = path.Clean(dir + t)
		}
		out[r.ID] = t
	}
	return out
}

// attr is an element's attribute by local name.
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// newDecoder reads Office XML: namespaces are matched by local name.
func newDecoder(b []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	return d
}
