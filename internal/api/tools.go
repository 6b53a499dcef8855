//go:build !jsctx

package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec"
)

// tools refuses host tools: they need the SDK's Options.Tools, enabled by
// building with -tags jsctx (see jsctx.go).
func (s *Server) tools(_ *secexec.Options, tools []ToolJSON) error {
	if len(tools) > 0 {
		return apiError(http.StatusNotImplemented, CodeNotImplemented, "host tools are not available in this build")
	}
	return nil
}

// contextRoutes registers the persistent JS context routes, which answer
// 501 in a build without them.
func (s *Server) contextRoutes(r chi.Router) {
	na := func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, apiError(http.StatusNotImplemented, CodeNotImplemented, "persistent JS contexts are not available in this build"))
	}
	r.Post("/contexts", na)
	r.Post("/contexts/{cid}/evaluate", na)
	r.Delete("/contexts/{cid}", na)
}
