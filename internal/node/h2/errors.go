//lint:file-ignore SA1019 x/net reports a GOAWAY that ends a stream as GoAwayError, deprecated by x/net with no replacement its ClientConn returns; node needs its code.

package h2

import (
	"context"
	"errors"
	"io"

	"golang.org/x/net/http2"

	"github.com/secexec/secexec/kernel/errno"
)

// ErrorInfo is what node's http2 module is told of a failed stream or
// session besides its error code.
type ErrorInfo struct {
	Message string `json:"message,omitempty"`
	// Rst is the RST_STREAM (or GOAWAY) error code.
	Rst int `json:"rst"`
}

// NodeError maps an error of x/net/http2 or of the kernel, as an Event
// carries it, to node's error code and what goes with it.
func NodeError(err error) (string, ErrorInfo) {
	var se http2.StreamError
	var ce http2.ConnectionError
	var ge http2.GoAwayError
	switch {
	case errors.As(err, &se):
		return "ERR_HTTP2_STREAM_ERROR", ErrorInfo{Message: "Stream closed with error code NGHTTP2_" + se.Code.String(), Rst: int(se.Code)}
	case errors.As(err, &ge):
		return "ERR_HTTP2_SESSION_ERROR", ErrorInfo{Message: "Session closed with error code NGHTTP2_" + ge.ErrCode.String(), Rst: int(ge.ErrCode)}
	case errors.As(err, &ce):
		return "ERR_HTTP2_SESSION_ERROR", ErrorInfo{Message: "Session closed with error code NGHTTP2_" + http2.ErrCode(ce).String(), Rst: int(ce)}
	case errors.Is(err, context.Canceled):
		return "ERR_HTTP2_STREAM_CANCEL", ErrorInfo{Message: "The pending stream has been canceled", Rst: int(http2.ErrCodeCancel)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The connection ended under the stream (x/net's read loop saw
		// EOF without a GOAWAY covering it): node closes the streams of
		// a closed socket with CANCEL, which is no error.
		return "ERR_HTTP2_CONNECTION_LOST", ErrorInfo{Message: "Stream closed with error code NGHTTP2_CANCEL", Rst: int(http2.ErrCodeCancel)}
	}
	// Anything else is the socket's errno (EIO for an error that has
	// none, such as x/net's own for a header list over the limit).
	return errno.Of(err).Name(), ErrorInfo{}
}
