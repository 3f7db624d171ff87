// Package apihelp is what package app passes to the handler packages that
// live beside it (app/agentsapi, app/kbapi, app/listingsapi): its request
// helpers, so that decoding, the organization of the request and the JSON
// writer stay the server's own.
package httpx

import (
	"net/http"
	"time"
)

// Helpers are app's request helpers.
type Helpers struct {
	OrgID     func(*http.Request) string     // the authenticated organization
	Decode    func(*http.Request, any) error // the size-limited JSON body, errors naming the field
	WriteJSON func(w http.ResponseWriter, status int, v any)
	Now       func() time.Time // the server's clock (UTC), for the meta timestamps
}
