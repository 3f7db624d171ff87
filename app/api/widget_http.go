package api

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	widgetapi "github.com/agentd/agentd/app/api/widget"
	"github.com/agentd/agentd/app/widget"
)

// newWidgetAPI builds the chat widget's public handlers (app/widgetapi) on
// this server's request helpers.
func (s *Server) newWidgetAPI(w *widget.Service) *widgetapi.Handlers {
	return widgetapi.New(widgetapi.Deps{Widget: w, Log: s.log, ReadBody: readBody, Decode: decodeBytes, WriteData: s.writeV2,
		Addr: clientAddr, Status: func(err error) (int, string) {
			e := toError(err)
			return status(e), e.Message
		}})
}

// widgetScript serves /widget.js (outside the API middleware and the
// OpenAPI document: it is a static file).
func widgetScript(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	widgetapi.ServeScript(w, r)
}
