package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/jsonbody"
)

// decodeJSON reads the size-limited request body and decodes it into dst.
// Every failure is a 4xx *Error naming what is wrong: a body over the
// route's limit (413), empty, not UTF-8, malformed, a field of the wrong
// type, or data after the JSON value (400). Unknown fields are ignored.
func decodeJSON(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(body, dst)
}

// readBody reads the size-limited request body: over the route's limit is
// 413, any other read failure 400.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errs.New(errs.TooLarge, fmt.Sprintf("request body too large (max %d bytes)", mbe.Limit))
		}
		return nil, badRequest("could not read request body")
	}
	return body, nil
}

// decodeBytes is decodeJSON on a body already read.
func decodeBytes(body []byte, dst any) error { return jsonbody.Decode(body, dst) }
