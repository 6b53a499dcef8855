package brotli

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/andybalholm/brotli"

	"github.com/secexec/secexec/internal/limitbuf"
	"github.com/secexec/secexec/kernel/errno"
)

// A Brotli stream (zlib.createBrotliCompress / createBrotliDecompress)
// keeps a coder for its life, so each write is coded as it comes instead
// of the whole stream being buffered until its end.
const (
	// MaxStreams bounds one Streams' live coders: each holds a window
	// and (encoders) hash tables in Go memory.
	MaxStreams = 16
	// ChunkSize bounds the output of one Push: a decoder that has more
	// hands it out over further pushes, so a bomb costs Go at most this
	// much at a time and the caller what it keeps.
	ChunkSize = 1 << 20
)

// Brotli operations, as Node numbers them (BROTLI_OPERATION_*).
const (
	OpProcess = 0
	OpFlush   = 1
	OpFinish  = 2
)

// Streams are one process's live stream coders, by id. A Streams is used
// by one goroutine at a time, apart from a Push running on a Runner; its
// zero value is ready.
type Streams struct {
	m    map[int]*stream
	next int
	// more is what the last Push left to give.
	more bool
}

// stream is one stream's coder and its charge against the process's
// memory.
type stream struct {
	enc  *brotli.Writer
	out  *limitbuf.Buffer // the encoder's output since the last push
	dec  *brotli.Reader
	in   pushReader // the decoder's unread input
	buf  []byte     // the decoder's output buffer, ChunkSize bytes
	done bool       // the decoder reached the end of the stream
	cost int64
}

// errNeedInput tells the decoder that the input pushed so far is used
// up; brotli.Reader returns it without changing its state, so decoding
// resumes with the next push.
var errNeedInput = errors.New("brotli: needs more input")

// pushReader is the decoder's source: the bytes of the pending pushes,
// then (once the stream is being finished) the end of the input.
type pushReader struct {
	b   []byte
	eof bool
}

func (p *pushReader) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		if p.eof {
			return 0, io.EOF
		}
		return 0, errNeedInput
	}
	n := copy(dst, p.b)
	p.b = p.b[n:]
	return n, nil
}

// streamCost is what a coder is charged: its window (twice, for the
// encoder's ring buffer and hash tables).
func streamCost(compress bool, lgwin int) int64 {
	if compress {
		return 2 << lgwin
	}
	// The decoder's window grows to what the stream asks, at most 16 MiB
	// without large windows; it is charged the default window up front.
	return 1 << 22
}

// New starts a coder (an encoder with quality and lgwin as Compress
// takes them, or a decoder) and returns its id and the memory it is
// charged, which must fit in budget; ErrInit when it does not or when
// MaxStreams are live.
func (z *Streams) New(compress bool, quality, lgwin, budget int) (id int, cost int64, err error) {
	if len(z.m) >= MaxStreams {
		return 0, 0, ErrInit
	}
	opts := encoderOptions(quality, lgwin)
	s := &stream{cost: streamCost(compress, opts.LGWin)}
	if int64(budget) < s.cost {
		return 0, 0, ErrInit
	}
	if compress {
		// The encoder's output between two pushes is bounded by what
		// one push can take in (plus Brotli's small overhead).
		s.out = limitbuf.New(2*MaxInput + 1<<16)
		s.enc = brotli.NewWriterOptions(s.out, opts)
	} else {
		s.dec = brotli.NewReader(&s.in)
	}
	if z.m == nil {
		z.m = map[int]*stream{}
	}
	z.next++
	z.m[z.next] = s
	return z.next, s.cost, nil
}

// Push codes in on coder id with op (OpProcess, OpFlush or OpFinish) and
// returns at most maxOut bytes of output; More then reports whether a
// decoder has output left, which a further Push with no input takes.
// The coding runs on run (nil: here), which may stop it between chunks
// of input. Push keeps in until it is decoded: the caller must not reuse
// it.
func (z *Streams) Push(id int, in []byte, op, maxOut int, run func(func(stop *atomic.Bool) error) error) ([]byte, error) {
	s, ok := z.m[id]
	if !ok || op < OpProcess || op > OpFinish || maxOut < 0 {
		return nil, errno.EINVAL
	}
	if len(in) > MaxInput {
		return nil, ErrTooLarge
	}
	var out []byte
	var more bool
	code := func(stop *atomic.Bool) error {
		var err error
		out, more, err = s.push(in, op, maxOut, stop)
		return err
	}
	var err error
	if run != nil {
		err = run(code)
	} else {
		err = code(nil)
	}
	if err != nil {
		return nil, err
	}
	z.more = more
	return out, nil
}

// More reports whether the last Push's decoder has output left.
func (z *Streams) More() bool { return z.more }

// Free ends coder id and returns the memory it was charged (0, false
// for an id that is not live).
func (z *Streams) Free(id int) (cost int64, ok bool) {
	s, ok := z.m[id]
	if !ok {
		return 0, false
	}
	delete(z.m, id)
	return s.cost, true
}

// push codes in (with op) and returns at most max bytes of output; more
// reports that a decoder has output left.
func (s *stream) push(in []byte, op, max int, stop *atomic.Bool) (out []byte, more bool, err error) {
	if s.enc != nil {
		s.out.Reset()
		if err := writeChunks(s.enc, in, stop); err != nil {
			return nil, false, err
		}
		switch op {
		case OpFlush:
			err = s.enc.Flush()
		case OpFinish:
			err = s.enc.Close()
		}
		if err != nil {
			return nil, false, encodeError(err)
		}
		if s.out.Len() > max {
			return nil, false, ErrTooLarge
		}
		return append([]byte(nil), s.out.Bytes()...), false, nil
	}
	if len(in) > 0 {
		if s.done {
			return nil, false, decodeError(errors.New("brotli: excessive input"))
		}
		s.in.b = append(s.in.b, in...)
	}
	s.in.eof = op == OpFinish
	if max == 0 && !s.done {
		// The process's memory is spent and the decoder may have more:
		// fail rather than hand out nothing forever.
		return nil, false, ErrTooLarge
	}
	if s.buf == nil {
		s.buf = make([]byte, ChunkSize)
	}
	buf := s.buf[:min(max, ChunkSize)]
	n := 0
	for n < len(buf) && !s.done {
		k, rerr := s.dec.Read(buf[n:])
		n += k
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF):
			s.done = true
		case errors.Is(rerr, errNeedInput):
			return append([]byte(nil), buf[:n]...), false, nil
		default:
			return nil, false, decodeError(rerr)
		}
	}
	if s.done && len(s.in.b) > 0 {
		return nil, false, decodeError(errors.New("brotli: excessive input"))
	}
	return append([]byte(nil), buf[:n]...), n == len(buf) && !s.done, nil
}
