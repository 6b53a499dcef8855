package metrics

import (
	"context"
	"log/slog"
	"time"
)

// Messages of the engines' phase reports (internal/js, internal/wasm).
const (
	JSPhasesMsg   = "js: session phases"
	WASMPhasesMsg = "wasm: session phases"
)

// Decode decodes an engine's phase report from a log record; attrs are
// attributes the logger added (slog.Logger.With). It reports false for
// any other record.
func Decode(rec slog.Record, attrs []slog.Attr) (Report, bool) {
	var rep Report
	switch rec.Message {
	case JSPhasesMsg:
		rep.Engine = "js"
	case WASMPhasesMsg:
		rep.Engine = "wasm"
	default:
		return Report{}, false
	}
	rep.Phases = make(map[string]time.Duration, 6)
	visit := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch {
		case a.Key == "warm_worker":
			rep.Hit = v.String() == "warm_worker_hit"
		case a.Key == "module_cache":
			rep.ModuleCache = v.String()
		case v.Kind() == slog.KindDuration:
			rep.Phases[a.Key] = v.Duration()
		}
		return true
	}
	for _, a := range attrs {
		visit(a)
	}
	rec.Attrs(visit)
	return rep, true
}

// Handler is a slog.Handler that decodes the engines' phase reports,
// hands each to a function (Set.Observe, typically), and passes the
// other records (and the reports, if asked to) on to the next handler.
type Handler struct {
	observe func(Report)
	next    slog.Handler
	reports bool        // forward the reports too
	attrs   []slog.Attr // from WithAttrs, for decoding
}

// NewHandler returns a Handler calling observe for every report and
// forwarding records to next (nil drops them); the reports themselves
// are forwarded only with forwardReports.
func NewHandler(next slog.Handler, observe func(Report), forwardReports bool) *Handler {
	if next == nil {
		next = slog.DiscardHandler
	}
	return &Handler{observe: observe, next: next, reports: forwardReports}
}

// Enabled implements slog.Handler: the reports (info level) are always
// wanted.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	if rep, ok := Decode(rec, h.attrs); ok {
		if h.observe != nil {
			h.observe(rep)
		}
		if !h.reports {
			return nil
		}
		// Asked-for reports are shown whatever the level of the next
		// handler.
		return h.next.Handle(ctx, rec)
	}
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{observe: h.observe, next: h.next.WithAttrs(as), reports: h.reports,
		attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{observe: h.observe, next: h.next.WithGroup(name), reports: h.reports, attrs: h.attrs}
}
