package mcpserver

import (
	"context"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// output collects what an exec writes to stdout and stderr: the first max
// bytes of each are kept for the result (the rest is counted as
// truncated), and, when the client asked for progress, sent on as
// progress notifications in the order they were written.
//
// Writes never wait on the client: they append to a queue that one
// goroutine drains, so a slow client coalesces output into fewer, larger
// notifications instead of stalling the guest. The queue holds only kept
// bytes, so it is bounded by 2*max.
type output struct {
	max    int
	notify func(stream string, chunk []byte, total int) // nil: no progress

	mu        sync.Mutex
	kept      [2][]byte
	truncated [2]bool
	queue     []chunk
	total     int  // bytes sent so far, both streams
	finished  bool // wake is closed
	wake      chan struct{}
	done      chan struct{}
}

type chunk struct {
	stream int
	data   []byte
}

var streamNames = [2]string{"stdout", "stderr"}

func newOutput(max int, notify func(stream string, chunk []byte, total int)) *output {
	o := &output{max: max, notify: notify}
	if notify != nil {
		o.wake = make(chan struct{}, 1)
		o.done = make(chan struct{})
		go o.drain()
	}
	return o
}

// progressNotifier sends progress notifications for the request, or
// returns nil if it carries no progress token.
func progressNotifier(ctx context.Context, req *mcp.CallToolRequest) func(string, []byte, int) {
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return nil
	}
	return func(stream string, data []byte, total int) {
		// A client that went away loses its notifications, nothing more.
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: tok,
			Progress:      float64(total),
			Message:       strings.ToValidUTF8(string(data), "\uFFFD"),
			Meta:          mcp.Meta{"stream": stream},
		})
	}
}

// writer returns the io.Writer of stream 0 (stdout) or 1 (stderr).
func (o *output) writer(stream int) *streamWriter { return &streamWriter{o: o, stream: stream} }

type streamWriter struct {
	o      *output
	stream int
}

func (w *streamWriter) Write(p []byte) (int, error) {
	o := w.o
	o.mu.Lock()
	room := o.max - len(o.kept[w.stream])
	data := p
	if len(data) > room {
		data = data[:room]
		o.truncated[w.stream] = true
	}
	if len(data) > 0 {
		o.kept[w.stream] = append(o.kept[w.stream], data...)
		if o.notify != nil {
			if n := len(o.queue); n > 0 && o.queue[n-1].stream == w.stream {
				o.queue[n-1].data = append(o.queue[n-1].data, data...)
			} else {
				o.queue = append(o.queue, chunk{stream: w.stream, data: append([]byte(nil), data...)})
			}
			if !o.finished {
				select {
				case o.wake <- struct{}{}:
				default:
				}
			}
		}
	}
	o.mu.Unlock()
	// The whole write is accepted: what is beyond the bound is dropped,
	// not refused, so the guest is not killed by EPIPE for printing.
	return len(p), nil
}

// drain sends queued chunks until finish.
func (o *output) drain() {
	defer close(o.done)
	for {
		_, open := <-o.wake
		for {
			o.mu.Lock()
			q := o.queue
			o.queue = nil
			o.mu.Unlock()
			if len(q) == 0 {
				break
			}
			for _, c := range q {
				o.total += len(c.data)
				o.notify(streamNames[c.stream], c.data, o.total)
			}
		}
		if !open {
			return
		}
	}
}

// finish sends what is still queued; every notification precedes the
// tool's result.
func (o *output) finish() {
	if o.wake != nil {
		o.mu.Lock()
		o.finished = true
		o.mu.Unlock()
		close(o.wake)
		<-o.done
	}
}

// result returns the kept bytes and whether any were dropped.
func (o *output) result(stream int) ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.kept[stream], o.truncated[stream]
}
