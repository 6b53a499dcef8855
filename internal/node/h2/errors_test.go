//lint:file-ignore SA1019 GoAwayError is what x/net's ClientConn returns (see errors.go).

package h2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"golang.org/x/net/http2"

	"github.com/secexec/secexec/kernel/errno"
)

// TestNodeError: the errors of x/net and of the kernel become node's
// codes, with the RST_STREAM code node reports.
func TestNodeError(t *testing.T) {
	for _, c := range []struct {
		err  error
		code string
		info ErrorInfo
	}{
		{http2.StreamError{StreamID: 1, Code: http2.ErrCodeRefusedStream}, "ERR_HTTP2_STREAM_ERROR", ErrorInfo{"Stream closed with error code NGHTTP2_REFUSED_STREAM", 7}},
		{fmt.Errorf("wrapped: %w", http2.GoAwayError{ErrCode: http2.ErrCodeEnhanceYourCalm}), "ERR_HTTP2_SESSION_ERROR", ErrorInfo{"Session closed with error code NGHTTP2_ENHANCE_YOUR_CALM", 11}},
		{http2.ConnectionError(http2.ErrCodeProtocol), "ERR_HTTP2_SESSION_ERROR", ErrorInfo{"Session closed with error code NGHTTP2_PROTOCOL_ERROR", 1}},
		{context.Canceled, "ERR_HTTP2_STREAM_CANCEL", ErrorInfo{"The pending stream has been canceled", 8}},
		{io.ErrUnexpectedEOF, "ERR_HTTP2_CONNECTION_LOST", ErrorInfo{"Stream closed with error code NGHTTP2_CANCEL", 8}},
		{errno.ECONNRESET, "ECONNRESET", ErrorInfo{}},
		{errors.New("odd"), "EIO", ErrorInfo{}},
	} {
		if code, info := NodeError(c.err); code != c.code || info != c.info {
			t.Errorf("NodeError(%v) = %s %+v, want %s %+v", c.err, code, info, c.code, c.info)
		}
	}
}
