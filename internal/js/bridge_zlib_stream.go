package js

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/andybalholm/brotli"
	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/limitbuf"
	"github.com/secexec/secexec/kernel/errno"
)

// A Brotli stream (zlib.createBrotliCompress / createBrotliDecompress)
// keeps a coder on the Go side for its life, so each write is coded as it
// comes instead of the whole stream being buffered until its end.
const (
	// maxBrotliStreams bounds a process's live coders: each holds a
	// window and (encoders) hash tables in Go memory.
	maxBrotliStreams = 16
	// brotliChunk bounds the output of one brotliPush call: a decoder
	// that has more hands it out over further calls, so a bomb costs Go
	// at most this much at a time and JavaScript what it keeps.
	brotliChunk = 1 << 20
	// maxBrotliStreamInput bounds one write (the bridge's blobs are
	// bounded by the same size).
	maxBrotliStreamInput = maxBlobBytes
)

// Brotli operations, as Node numbers them (BROTLI_OPERATION_*).
const (
	brotliProcess = 0
	brotliFlush   = 1
	brotliFinish  = 2
)

// brotliStream is one stream's coder and its charge against the
// process's external memory.
type brotliStream struct {
	enc  *brotli.Writer
	out  *limitbuf.Buffer // the encoder's output since the last push
	dec  *brotli.Reader
	in   pushReader // the decoder's unread input
	buf  []byte     // the decoder's output buffer, brotliChunk bytes
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

// brotliCost is what a coder is charged: its window (twice, for the
// encoder's ring buffer and hash tables).
func brotliCost(compress bool, lgwin int) int64 {
	if compress {
		return 2 << lgwin
	}
	// The decoder's window grows to what the stream asks, at most 16 MiB
	// without large windows; it is charged the default window up front.
	return 1 << 22
}

func (c *cryptoState) brotliArg(args []*v8.Value) (*brotliStream, int, error) {
	id, err := argInt(args, 0)
	if err != nil {
		return nil, 0, err
	}
	s, ok := c.zs[id]
	if !ok {
		return nil, 0, errno.EINVAL
	}
	return s, id, nil
}

// push codes in (with op, one of brotliProcess, brotliFlush and
// brotliFinish) and returns at most max bytes of output; more reports
// that a decoder has output left (a further push with no input takes
// it).
func (s *brotliStream) push(in []byte, op, max int, stop *atomic.Bool) (out []byte, more bool, err error) {
	if s.enc != nil {
		s.out.Reset()
		for rest := in; len(rest) > 0; {
			if stop != nil && stop.Load() {
				return nil, false, errno.ECANCELED
			}
			k := min(len(rest), 64<<10)
			if _, err := s.enc.Write(rest[:k]); err != nil {
				return nil, false, brotliEncodeError(err)
			}
			rest = rest[k:]
		}
		switch op {
		case brotliFlush:
			err = s.enc.Flush()
		case brotliFinish:
			err = s.enc.Close()
		}
		if err != nil {
			return nil, false, brotliEncodeError(err)
		}
		if s.out.Len() > max {
			return nil, false, errTooLarge
		}
		return append([]byte(nil), s.out.Bytes()...), false, nil
	}
	if len(in) > 0 {
		if s.done {
			return nil, false, brotliDecodeError(errors.New("brotli: excessive input"))
		}
		// The scratch buffer is reused by the next call; a blob is ours.
		s.in.b = append(s.in.b, in...)
	}
	s.in.eof = op == brotliFinish
	if max == 0 && !s.done {
		// The process's memory is spent and the decoder may have more:
		// fail rather than hand out nothing forever.
		return nil, false, errTooLarge
	}
	if s.buf == nil {
		s.buf = make([]byte, brotliChunk)
	}
	buf := s.buf[:min(max, brotliChunk)]
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
			return nil, false, brotliDecodeError(rerr)
		}
	}
	if s.done && len(s.in.b) > 0 {
		return nil, false, brotliDecodeError(errors.New("brotli: excessive input"))
	}
	return append([]byte(nil), buf[:n]...), n == len(buf) && !s.done, nil
}

func brotliEncodeError(err error) error {
	if errors.Is(err, limitbuf.ErrLimit) {
		return errTooLarge
	}
	return zlibError("ERR_ZLIB_INITIALIZATION_FAILED", "Compression failed")
}

func init() {
	// brotliNew(compress, quality, lgwin) starts a coder and returns its id.
	register("brotliNew", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		compress, err1 := argInt(args, 0)
		quality, err2 := argInt(args, 1)
		lgwin, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errno.EINVAL
		}
		c := r.cs()
		if len(c.zs) >= maxBrotliStreams {
			return nil, zlibError("ERR_ZLIB_INITIALIZATION_FAILED", "Initialization failed")
		}
		if quality < 0 || quality > 11 {
			quality = 11
		}
		if lgwin == 0 {
			lgwin = 22
		}
		lgwin = min(max(lgwin, 10), 24)
		s := &brotliStream{cost: brotliCost(compress != 0, lgwin)}
		if int64(r.hostBudget()) < s.cost {
			return nil, zlibError("ERR_ZLIB_INITIALIZATION_FAILED", "Initialization failed")
		}
		if compress != 0 {
			// The encoder's output between two pushes is bounded by what
			// one push can take in (plus Brotli's small overhead).
			s.out = limitbuf.New(2*maxBrotliStreamInput + 1<<16)
			s.enc = brotli.NewWriterOptions(s.out, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
		} else {
			s.dec = brotli.NewReader(&s.in)
		}
		if c.zs == nil {
			c.zs = map[int]*brotliStream{}
		}
		c.nextZ++
		c.zs[c.nextZ] = s
		r.blobBytes += s.cost
		return r.num(c.nextZ), nil
	})
	// brotliPush(id, n, op, max) codes the bytes n and returns at most
	// max bytes of output; brotliMore then says whether a decoder has
	// more to give.
	register("brotliPush", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		c := r.cs()
		s, _, err := c.brotliArg(args)
		if err != nil {
			return nil, err
		}
		n, err1 := argInt(args, 1)
		op, err2 := argInt(args, 2)
		maxOut, err3 := argInt(args, 3)
		if err1 != nil || err2 != nil || err3 != nil || op < brotliProcess || op > brotliFinish || maxOut < 0 {
			return nil, errno.EINVAL
		}
		in, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		if len(in) > maxBrotliStreamInput {
			return nil, errTooLarge
		}
		maxOut = min(maxOut, r.hostBudget())
		var out []byte
		var more bool
		run := func(stop *atomic.Bool) error {
			var perr error
			out, more, perr = s.push(in, op, maxOut, stop)
			return perr
		}
		// A large input (a blob, ours to hand over) is coded beside the
		// call, which gives way to kill and time limit (see heavy).
		if n < 0 {
			err = r.heavy(run)
		} else {
			err = run(nil)
		}
		if err != nil {
			return nil, err
		}
		c.zMore = more
		return r.bytesResult(out)
	})
	register("brotliMore", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		return r.boolean(r.cs().zMore), nil
	})
	// brotliFree ends a coder; JavaScript calls it when its stream ends,
	// is closed or is destroyed.
	register("brotliFree", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		c := r.cs()
		s, id, err := c.brotliArg(args)
		if err != nil {
			return nil, nil
		}
		delete(c.zs, id)
		r.blobBytes -= s.cost
		return nil, nil
	})
}
