package webget

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
)

// tlsConn is the type of http.Transport.TLSNextProto's connection.
type tlsConn = tls.Conn

type httptraceClientTrace struct {
	gotConn func(net.Conn)
}

func withTrace(ctx context.Context, t *httptraceClientTrace) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { t.gotConn(info.Conn) },
	})
}
