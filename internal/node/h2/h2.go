// Package h2 runs the HTTP/2 sessions behind node's http2 module on a
// VM's own sockets, with no JavaScript engine: the protocol (framing,
// HPACK, flow control, stream states, settings) is golang.org/x/net/http2,
// its ClientConn for http2.connect and its Server for
// http2.createServer, each run over one kernel socket (vfs.File) that the
// guest connected or accepted. Every byte still goes through the guest's
// socket, so the kernel's network policy and TLS apply as to any other.
//
// The owner (the JavaScript runtime, internal/js) names sessions and
// streams by integer handles and runs an event loop: a Client or Server
// reports what happens on its sessions as Events through the owner's
// Loop, from goroutines of its own. Body chunks are delivered one at a
// time and each waits until the loop handled it, so that neither side
// buffers a body: HTTP/2 flow control is the bound. A Client's and a
// Server's methods are for the loop's goroutine only; what they start
// runs on goroutines of its own.
//
// Errors for bad arguments are kernel errnos (EINVAL, EBADF, EPIPE,
// EMFILE, ...), as the bridge reports them to the guest; NodeError maps a
// session's or stream's failure to node's error code.
package h2

import (
	"context"
	"net/http"
	"strings"
)

// Limits that hold whatever the guest asks for.
const (
	// MaxStreams bounds the open streams of one client session (the
	// server's SETTINGS_MAX_CONCURRENT_STREAMS usually queues far fewer).
	MaxStreams = 1024
	// DefaultHeaderList is the header list a session accepts unless told
	// otherwise (node's default maxHeaderListSize), and MaxHeaderList the
	// most a guest may ask for.
	DefaultHeaderList = 65535
	MaxHeaderList     = 1 << 20
	// What a peer may send before the guest reads: the HTTP/2 flow
	// control windows of one connection and of one stream. They bound the
	// memory a session holds in Go whatever the guest does.
	ConnWindow   = 1 << 20
	StreamWindow = 256 << 10
	// MaxServerSessions bounds the server sessions of one Server: each
	// holds a socket that left the guest's descriptor table, so the
	// table's own limit no longer counts it.
	MaxServerSessions = 256
	// ServerStreams is the most concurrent streams a server session
	// allows a client (node's default is unbounded; each stream is a
	// goroutine here), and the default when the guest asks for none.
	ServerStreams = 128
	// ChunkSize is the most one body chunk delivers.
	ChunkSize = 64 << 10
	// maxHandles bounds the client sessions, the client streams and the
	// server streams of one owner, as the runtime bounds its other
	// handles.
	maxHandles = 4096
)

// Kind says what an Event reports.
type Kind uint8

// The events of client and server sessions. Handle fields an event does
// not name are zero.
const (
	// KindResponse is a client stream's response head: Stream, Status,
	// Headers, and End when the head ended the stream.
	KindResponse Kind = iota + 1
	// KindInformational is a 1xx head before the response (103 early hints,
	// 100): Stream, Status, Headers.
	KindInformational
	// KindResponseData is a chunk of a response body: Stream, Data. It is
	// delivered (Loop.Deliver).
	KindResponseData
	// KindStreamEnd ends a client stream: Stream, and Err or Trailers.
	KindStreamEnd
	// KindSessionEnd ends a client session: Session, and Err unless the
	// connection was closed or reached EOF.
	KindSessionEnd
	// KindRequest is a request a server session received: Session, Stream
	// (the handle the Server gave it), ID (the stream's id on the wire),
	// Headers (pseudo-headers first) and End when the request has no
	// body.
	KindRequest
	// KindRequestData is a chunk of a request body: Stream, Data. It is
	// delivered.
	KindRequestData
	// KindRequestEnd ends a request body: Stream and Trailers.
	KindRequestEnd
	// KindServerStreamEnd closes a server stream: Stream, and Err unless the
	// response ended or the owner reset it.
	KindServerStreamEnd
	// KindServerSessionEnd ends a server session: Session, and Err as for
	// KindSessionEnd.
	KindServerSessionEnd
)

// Event is one thing that happened on a session or a stream.
type Event struct {
	Kind    Kind
	Session int
	Stream  int
	ID      uint32
	Status  int
	Headers [][2]string
	End     bool
	// Trailers is nil when the body ended without any.
	Trailers [][2]string
	Data     []byte
	Err      error
}

// Loop is the owner's event loop, which sessions report to from their
// own goroutines.
type Loop interface {
	// Post queues ev for the loop; it reports false when ctx ended first.
	Post(ctx context.Context, ev Event) bool
	// Deliver queues ev and waits until the loop handled it (so that the
	// sender may reuse nothing it handed over, and reads no further until
	// then); it reports whether the loop handled it before ctx ended.
	Deliver(ctx context.Context, ev Event) bool
}

// Start runs work off the loop's goroutine as one of the owner's
// asynchronous operations, reporting its result when it finishes. It
// fails, and work never runs, when the owner can take no more.
type Start func(work func() error) error

// headerList is a header block with lower-case names (HTTP/2 names are),
// never nil.
func headerList(h http.Header) [][2]string {
	out := [][2]string{}
	for k, vv := range h {
		k = strings.ToLower(k)
		for _, v := range vv {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// trailerList is headerList of trailers, nil when there are none.
func trailerList(h http.Header) [][2]string {
	if len(h) == 0 {
		return nil
	}
	return headerList(h)
}

// validHeaderField reports whether a header field may go on the wire
// (the guest's http2 module validated it already; this keeps x/net from
// being handed anything it would refuse with a panic or a broken frame).
func validHeaderField(k, v string) bool {
	if k == "" || len(k)+len(v) > MaxHeaderList {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == ':' || (c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}
