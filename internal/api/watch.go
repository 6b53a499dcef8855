package api

import (
	"net/http"
	"strconv"

	"github.com/secexec/secexec"
)

// defaultMaxWatches bounds the watch streams open on one VM at once.
const defaultMaxWatches = 8

// watch serves GET /v1/vms/{id}/watch?path=P[&recursive=true]: the
// VM's filesystem events under P as server-sent events, one "change"
// event ({op, name, is_dir, cookie}) each, until the client goes away or
// the watch ends ("ended" op). A client that does not keep up loses
// events to the kernel's bounded queue and gets an "overflow" op in
// their place.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path := q.Get("path")
	if path == "" {
		writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "the path parameter is required"))
		return
	}
	recursive := false
	if v := q.Get("recursive"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "recursive must be true or false"))
			return
		}
		recursive = b
	}
	if s.draining.Load() {
		writeError(w, apiError(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
		return
	}
	e := vmOf(r)
	e.mu.Lock()
	if e.watches >= s.cfg.MaxWatches {
		e.mu.Unlock()
		writeError(w, apiError(http.StatusTooManyRequests, CodeQuota, "at most %d watches per VM at once", s.cfg.MaxWatches))
		return
	}
	e.watches++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.watches--
		e.mu.Unlock()
	}()
	wt, err := e.vm.FS().Watch(r.Context(), path, &secexec.WatchOptions{Recursive: recursive})
	if err != nil {
		writeError(w, err)
		return
	}
	defer wt.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	_ = sw.rc.Flush()
	for {
		ev, err := wt.Next(r.Context())
		if err != nil {
			return
		}
		if sw.event("change", ev) != nil || ev.Op == secexec.WatchEnded {
			return
		}
	}
}
