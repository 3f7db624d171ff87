package mcp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/storage/orgstore"
)

// Keys finds an API key by its hash (*orgstore.Orgs).
type Keys interface {
	LookupKey(ctx context.Context, hash []byte) (orgstore.KeyAuth, error)
}

// KeyPrincipal is the organization and role of an API key for `agentd
// mcp`; a missing, malformed, unknown, revoked or expired key is refused.
func KeyPrincipal(ctx context.Context, keys Keys, key string, now time.Time) (Principal, error) {
	if key == "" {
		return Principal{}, errors.New("an API key is required: --api-key or AGENTD_API_KEY (make one with: agentd key create)")
	}
	if !access.WellFormedKey(key) {
		return Principal{}, errors.New("the API key is not an agentd key (agd_...)")
	}
	h := sha256.Sum256([]byte(key))
	k, err := keys.LookupKey(ctx, h[:])
	if err != nil {
		return Principal{}, errors.New("the API key is unknown or revoked")
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return Principal{}, fmt.Errorf("the API key expired on %s", k.ExpiresAt.Format("2006-01-02"))
	}
	return Principal{KeyID: k.KeyID, OrgID: k.OrgID, Role: k.Role}, nil
}

// Stdio serves agentd's MCP server as p on in and out (`agentd mcp`, for
// an assistant on the same machine) until the client leaves or ctx ends.
func Stdio(ctx context.Context, d Deps, p Principal, in io.Reader, out io.Writer) error {
	srv := New(d, Options{Fixed: &p})
	err := srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
