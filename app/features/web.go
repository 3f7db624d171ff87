package features

import (
	"context"

	"github.com/agentd/agentd/app/kb/web"
	"github.com/agentd/agentd/internal/safehttp"
)

// webFetch is how the knowledge base fetches web pages: through the same
// forgery guard as webhooks and url tools (one switch, --webhook-allow-private,
// lets them reach private addresses).
func webFetch(cfg Config) web.Fetch {
	c := safehttp.New(safehttp.Options{AllowPrivate: cfg.Webhooks.AllowPrivate, Resolver: cfg.Webhooks.Resolver})
	return func(ctx context.Context, url string, h map[string]string, limit int64) (web.Response, error) {
		p, err := c.Get(ctx, url, h, limit)
		return web.Response{URL: p.URL, Status: p.Status, ContentType: p.ContentType, ETag: p.ETag,
			LastModified: p.LastModified, Body: p.Body}, err
	}
}
