package js

// The bridge of node's http2.createServer and createSecureServer: thin
// adapters over internal/node/h2's Server (x/net/http2's Server.ServeConn
// on the guest's accepted kernel socket; see the h2 package for why).
// Its events arrive through handleH2 (bridge_http2.go).

import (
	"context"
	"math"

	v8 "github.com/tommie/v8go"
	"golang.org/x/net/http2"

	"github.com/secexec/secexec/internal/node/h2"
	"github.com/secexec/secexec/kernel/vfs"
)

// h2sop starts a server stream's operation as operation id ("h2sop").
func (r *rt) h2sop(id int) h2.Start {
	return func(work func() error) error {
		return r.startOp("h2sop", id, func(context.Context) (string, error) { return "", work() })
	}
}

// disposeH2Server ends every server session of the process.
func (r *rt) disposeH2Server() {
	if r.h2srv != nil {
		r.h2srv.Dispose()
	}
}

// bridgeH2sServe serves HTTP/2 as session h on accepted socket fd, which
// leaves the guest's descriptor table.
func bridgeH2sServe(r *rt, a *callArgs) (*v8.Value, error) {
	fd := a.int(0)
	var o h2.ServerOptions
	if err := h2JSON(a.str(2), maxH2Options, &o); err != nil {
		return nil, err
	}
	return nil, r.h2server().Serve(r.ctx, a.int(1), o, func() (vfs.File, error) { return r.takeSocket(fd) })
}

// bridgeH2sRespond sends stream sh's response head as operation id.
func bridgeH2sRespond(r *rt, a *callArgs) (*v8.Value, error) {
	var resp h2.Response
	if err := h2JSON(a.str(1), maxH2Request, &resp); err != nil {
		return nil, err
	}
	return nil, r.h2server().Respond(a.int(0), resp, r.h2sop(a.int(2)))
}

// bridgeH2sWrite sends part of stream sh's response body as operation
// id, which completes when x/net took the bytes (the peer's flow-control
// window).
func bridgeH2sWrite(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.h2server().Write(a.int(0), a.bytes(1), r.h2sop(a.int(2)))
}

// bridgeH2sEnd ends stream sh's response, with trailers (JSON, or
// empty for none), as operation id.
func bridgeH2sEnd(r *rt, a *callArgs) (*v8.Value, error) {
	var trailers [][2]string
	if js := a.str(1); js != "" {
		if err := h2JSON(js, maxH2Request, &trailers); err != nil {
			return nil, err
		}
	}
	return nil, r.h2server().End(a.int(0), trailers, r.h2sop(a.int(2)))
}

// bridgeH2sReset resets stream sh with RST_STREAM code (CANCEL for a
// code that is none).
func bridgeH2sReset(r *rt, a *callArgs) (*v8.Value, error) {
	code := math.Trunc(a.float(1))
	if math.IsNaN(code) || code < 0 || code > math.MaxUint32 {
		code = float64(http2.ErrCodeCancel)
	}
	r.h2server().Reset(a.int(0), uint32(code))
	return nil, nil
}

// bridgeH2sPause pauses or resumes stream sh's request body.
func bridgeH2sPause(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2server().Pause(a.int(0), a.bool(1))
	return nil, nil
}

// bridgeH2sPush sends a push promise on stream sh as operation id
// ("h2spush"): EOPNOTSUPP when the client disabled push.
func bridgeH2sPush(r *rt, a *callArgs) (*v8.Value, error) {
	var q h2.Request
	if err := h2JSON(a.str(1), maxH2Request, &q); err != nil {
		return nil, err
	}
	push, err := r.h2server().Push(a.int(0), q)
	if err != nil {
		return nil, err
	}
	return nil, r.startOp("h2spush", a.int(2), func(context.Context) (string, error) { return "", push() })
}

// bridgeH2sRef sets whether server session h keeps the process alive.
func bridgeH2sRef(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2server().SetRef(a.int(0), a.bool(1))
	return nil, nil
}

// bridgeH2sClose closes server session h: gracefully (GOAWAY, the open
// streams finish) or at once.
func bridgeH2sClose(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2server().Close(a.int(0), a.bool(1))
	return nil, nil
}
