package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/fxamacker/cbor/v2"
)

// ErrProtocol is matched (errors.Is) by every error about a peer breaking
// the protocol. The connection is closed after one.
var ErrProtocol = errors.New("engine protocol violation")

// Specific protocol errors; each matches ErrProtocol.
var (
	ErrFrameTooLarge = fmt.Errorf("%w: frame too large", ErrProtocol)
	ErrFrameTooSmall = fmt.Errorf("%w: frame too small", ErrProtocol)
	ErrUnknownType   = fmt.Errorf("%w: unknown message type", ErrProtocol)
)

// The CBOR modes are immutable after construction and safe for
// concurrent use.
var (
	encMode cbor.EncMode
	decMode cbor.DecMode
)

func init() {
	var err error
	encMode, err = cbor.EncOptions{
		// Guest paths and names are bytes, not necessarily UTF-8; they
		// travel as text strings holding those bytes (see decMode).
		String: cbor.StringToTextString,
	}.EncMode()
	if err != nil {
		panic(err)
	}
	decMode, err = cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		MaxNestedLevels:   8,
		MaxArrayElements:  1 << 20,
		MaxMapPairs:       64,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
		UTF8:              cbor.UTF8DecodeInvalid,
		FieldNameMatching: cbor.FieldNameMatchingCaseSensitive,
	}.DecMode()
	if err != nil {
		panic(err)
	}
}

// Frame is one decoded message.
type Frame struct {
	Type Type
	// ID is the request, process or VM the message is about (0 for
	// Hello, Welcome and Fatal).
	ID uint64
	// Body is a pointer to the message struct for Type (e.g. *Data).
	Body any
}

// Append appends the encoding of one frame to dst.
func Append(dst []byte, t Type, id uint64, body any) ([]byte, error) {
	want, ok := newBody(t)
	if !ok {
		return dst, fmt.Errorf("encode: %w: %d", ErrUnknownType, t)
	}
	if reflect.TypeOf(want) != reflect.TypeOf(body) {
		return dst, fmt.Errorf("encode %s: body is %T, want %T", t, body, want)
	}
	if err := validate(Frame{Type: t, ID: id, Body: body}); err != nil {
		return dst, fmt.Errorf("encode %s: %w", t, err)
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	dst[start+4] = byte(t)
	binary.BigEndian.PutUint64(dst[start+5:], id)
	b, err := encMode.Marshal(body)
	if err != nil {
		return dst[:start], fmt.Errorf("encode %s: %w", t, err)
	}
	n := HeaderSize - 4 + len(b)
	if n > MaxFrame {
		return dst[:start], fmt.Errorf("encode %s: %w (%d bytes)", t, ErrFrameTooLarge, n)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return append(dst, b...), nil
}

// Decode decodes one complete frame (length prefix included) and checks
// it against the schema.
func Decode(frame []byte) (Frame, error) {
	if len(frame) < HeaderSize {
		return Frame{}, ErrFrameTooSmall
	}
	n := binary.BigEndian.Uint32(frame)
	if n > MaxFrame {
		return Frame{}, ErrFrameTooLarge
	}
	if int64(n) != int64(len(frame)-4) {
		return Frame{}, fmt.Errorf("%w: length %d but %d bytes", ErrProtocol, n, len(frame)-4)
	}
	return decodeBody(Type(frame[4]), binary.BigEndian.Uint64(frame[5:]), frame[HeaderSize:])
}

func decodeBody(t Type, id uint64, b []byte) (Frame, error) {
	body, ok := newBody(t)
	if !ok {
		return Frame{}, fmt.Errorf("%w: %d", ErrUnknownType, uint8(t))
	}
	if err := decMode.Unmarshal(b, body); err != nil {
		return Frame{}, fmt.Errorf("%w: %s: %v", ErrProtocol, t, err)
	}
	f := Frame{Type: t, ID: id, Body: body}
	if err := validate(f); err != nil {
		return Frame{}, fmt.Errorf("%w: %s: %s", ErrProtocol, t, err)
	}
	return f, nil
}

// validate checks what CBOR typing cannot: value ranges and ids.
var (
	errBadSize    = errors.New("bad size")
	errNegTimeout = errors.New("negative timeout")
)

func validate(f Frame) error {
	if ok, err := validateJSCtx(f); ok {
		if err != nil {
			return err
		}
		if f.ID == 0 {
			return errors.New("id 0")
		}
		return nil
	}
	switch b := f.Body.(type) {
	case *Hello:
		if len(b.Token) != TokenSize {
			return errors.New("bad token length")
		}
	case *Fatal:
		return b.Err.validate()
	case *Response:
		if b.Err != nil {
			if err := b.Err.validate(); err != nil {
				return err
			}
		}
		if len(b.Data) > MaxChunk {
			return errors.New("inline data over MaxChunk")
		}
		if len(b.Value) > MaxEvalValue || len(b.Stdout) > MaxEvalOutput || len(b.Stderr) > MaxEvalOutput {
			return errBadSize
		}
	case *Data:
		if b.Fd > FdFile {
			return errors.New("bad fd")
		}
		if len(b.Bytes) > MaxChunk {
			return errors.New("chunk over MaxChunk")
		}
	case *Credit:
		if b.Fd > FdStderr {
			return errors.New("bad fd")
		}
		if b.N == 0 || b.N > Window {
			return errors.New("bad credit")
		}
	case *Close:
		if b.Fd > FdFile {
			return errors.New("bad fd")
		}
		if b.Err != nil {
			return b.Err.validate()
		}
	case *WriteFile:
		if b.Size < 0 || int64(len(b.Data)) > b.Size || len(b.Data) > MaxChunk {
			return errors.New("bad size")
		}
		if b.Offset < 0 || (b.At && int64(len(b.Data)) != b.Size) {
			return errors.New("bad offset")
		}
	case *PathOp:
		if b.Limit < 0 || b.Offset < 0 {
			return errors.New("negative limit or offset")
		}
	case *Run:
		if b.Timeout < 0 {
			return errors.New("negative timeout")
		}
	}
	if f.Type.IsRequest() || f.Type == TResponse || f.Type == TCancel || f.Type == TData ||
		f.Type == TCredit || f.Type == TClose || f.Type == TExit || f.Type == TVMEvent || f.Type == TAudit {
		if f.ID == 0 {
			return errors.New("id 0")
		}
	}
	return nil
}

// Reader reads frames from a stream.
type Reader struct {
	r   io.Reader
	hdr [HeaderSize]byte
	buf []byte
}

// NewReader returns a Reader of r. Wrap r in a bufio.Reader for fewer
// system calls.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// keepBuf is the largest body buffer a Reader keeps between frames; a
// bigger frame gets a buffer of its own that is dropped after it.
const keepBuf = 256 << 10

// Read reads and decodes the next frame. It returns io.EOF at a clean end
// of stream, io.ErrUnexpectedEOF inside a frame, and an error matching
// ErrProtocol for a frame that breaks the protocol.
func (r *Reader) Read() (Frame, error) {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(r.hdr[:])
	if n > MaxFrame {
		return Frame{}, ErrFrameTooLarge
	}
	if n < HeaderSize-4 {
		return Frame{}, ErrFrameTooSmall
	}
	size := int(n) - (HeaderSize - 4)
	var b []byte
	if size <= keepBuf {
		if cap(r.buf) < size {
			r.buf = make([]byte, keepBuf)
		}
		b = r.buf[:size]
	} else {
		b = make([]byte, size)
	}
	if _, err := io.ReadFull(r.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	// The decoder copies byte strings out of b, so b can be reused.
	return decodeBody(Type(r.hdr[4]), binary.BigEndian.Uint64(r.hdr[5:]), b)
}

// Writer writes frames to a stream; it is safe for concurrent use, and
// each frame reaches the stream in one Write call.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// ErrWriterClosed is returned by writes after WriteLast.
var ErrWriterClosed = errors.New("engine protocol: no frames after the last")

// Write encodes and writes one frame. After a write error every later
// call returns the same error.
func (w *Writer) Write(t Type, id uint64, body any) error {
	return w.write(t, id, body, false)
}

// WriteLast writes a frame (a Fatal) after which every write fails with
// ErrWriterClosed, so that it is the last frame the peer reads.
func (w *Writer) WriteLast(t Type, id uint64, body any) error {
	return w.write(t, id, body, true)
}

func (w *Writer) write(t Type, id uint64, body any, last bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if last {
		defer func() {
			if w.err == nil {
				w.err = ErrWriterClosed
			}
		}()
	}
	if w.err != nil {
		return w.err
	}
	b, err := Append(w.buf[:0], t, id, body)
	if err != nil {
		return err
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return err
	}
	if cap(b) <= keepBuf {
		w.buf = b[:0]
	} else {
		w.buf = nil
	}
	return nil
}
