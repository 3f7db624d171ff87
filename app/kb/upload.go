package kb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentd/agentd/app/kb/convert"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/kbstore"
)

// MaxUploadBytes is the largest file POST /api/v1/kb/sources/upload takes.
const MaxUploadBytes = convert.MaxFileBytes

// UploadInput is an uploaded file and the source fields sent with it.
type UploadInput struct {
	CollectionID string
	ExternalID   string // "" takes the file name
	Title        string // "" takes the file name
	Metadata     map[string]any
	FileName     string
	ContentType  string
	Data         []byte
}

// UploadResult is a written source and what its file was read as.
type UploadResult struct {
	UpsertResult
	Format        string `json:"format"`
	MarkdownBytes int    `json:"markdownBytes"`
}

// Upload converts a file to Markdown and writes it as a source of the
// collection, through the same pipeline as any source (hash dedupe,
// chunking, embedding). A file that is too large, of a type agentd does
// not read, encrypted or empty is refused naming the problem; one that
// fails to convert is recorded as a failed source with the reason.
func (s *Service) Upload(ctx context.Context, orgID string, in UploadInput) (UploadResult, error) {
	if len(in.Data) == 0 {
		return UploadResult{}, invalid("file", "file is required")
	}
	if len(in.Data) > MaxUploadBytes {
		return UploadResult{}, &errs.Error{Kind: errs.TooLarge, Field: "file",
			Message: fmt.Sprintf("file too large, max %d MB", MaxUploadBytes>>20)}
	}
	if in.ExternalID == "" {
		in.ExternalID = in.FileName
	}
	if in.Title == "" {
		in.Title = strings.TrimSpace(in.FileName)
	}
	format := convert.Detect(in.FileName, in.ContentType, in.Data)
	if format == "" {
		return UploadResult{}, invalid("file", "unsupported file type: upload PDF, DOCX, XLSX, PPTX, HTML, CSV, Markdown or plain text")
	}
	md, cerr := convert.ToMarkdown(format, in.Data)
	switch {
	case errors.Is(cerr, convert.ErrTooLarge):
		return UploadResult{}, &errs.Error{Kind: errs.TooLarge, Field: "file", Message: cerr.Error()}
	case errors.Is(cerr, convert.ErrUnsupported), errors.Is(cerr, convert.ErrEncrypted), errors.Is(cerr, convert.ErrEmpty):
		return UploadResult{}, invalid("file", cerr.Error())
	}
	body := SourceInput{CollectionID: in.CollectionID, ExternalID: &in.ExternalID, Title: &in.Title, Content: &md, Metadata: in.Metadata}
	if cerr != nil { // the file is damaged: the source says so
		return s.failUpload(ctx, orgID, body, format, cerr)
	}
	res, err := s.UpsertSource(ctx, orgID, body)
	if err != nil {
		return UploadResult{}, err
	}
	return UploadResult{UpsertResult: res, Format: format, MarkdownBytes: len(md)}, nil
}

func (s *Service) failUpload(ctx context.Context, orgID string, body SourceInput, format string, cause error) (UploadResult, error) {
	placeholder := "-"
	body.Content = &placeholder
	in, fe := body.Validate()
	if fe != nil {
		return UploadResult{}, fe
	}
	c, err := s.checkCollection(ctx, orgID, body.CollectionID)
	if err != nil {
		return UploadResult{}, err
	}
	reason := "conversion failed: " + cause.Error()
	id, err := s.db.KB.FailSource(ctx, orgID, c.ID, kbstore.SourceInput{ExternalID: in.ExternalID, Title: in.Title, Metadata: in.Metadata}, reason)
	if err != nil {
		return UploadResult{}, err
	}
	return UploadResult{UpsertResult: UpsertResult{DocumentID: id, ExternalID: in.ExternalID, Status: StatusFailed, Message: reason},
		Format: format}, nil
}
