// Package brotli is the native side of node:zlib's Brotli: one-shot
// compression and decompression and the coders of Brotli streams, with
// Node's errors and with every output bounded before it is made. It works
// on bytes only (no V8), so its decoder is fuzzed without cgo; the coding
// itself is andybalholm/brotli's.
package brotli

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/andybalholm/brotli"

	"github.com/secexec/secexec/internal/limitbuf"
	"github.com/secexec/secexec/kernel/errno"
)

// Error is a failure Node reports as a zlib error: Code (such as
// ERR_BUFFER_TOO_LARGE or ERR__ERROR_FORMAT_PADDING_1), Message when not
// empty and, for decoder errors, Errno, the decoder's (negative) error
// number Node puts on the error object (0: none).
type Error struct {
	Code    string
	Message string
	Errno   int
}

func (e *Error) Error() string {
	s := "brotli: " + e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Errno != 0 {
		s += " (" + strconv.Itoa(e.Errno) + ")"
	}
	return s
}

// ErrTooLarge reports output past the caller's bound (Node's
// maxOutputLength, or the memory the process has left).
var ErrTooLarge error = &Error{Code: "ERR_BUFFER_TOO_LARGE"}

var (
	errCompress = &Error{Code: "ERR_ZLIB_INITIALIZATION_FAILED", Message: "Compression failed"}
	// ErrInit reports a coder that cannot be made: too many, or no memory
	// left for its window.
	ErrInit error = &Error{Code: "ERR_ZLIB_INITIALIZATION_FAILED", Message: "Initialization failed"}
)

// decodeErrors maps the decoder's error names (as andybalholm/brotli
// prints them) to Node's codes and errno values. Node builds the code
// from the C name BROTLI_DECODER_ERROR_X by cutting "BROTLI_DECODER",
// hence the double underscore.
var decodeErrors = map[string]struct {
	code  string
	errno int
}{
	"EXUBERANT_NIBBLE":        {"ERR__ERROR_FORMAT_EXUBERANT_NIBBLE", -1},
	"RESERVED":                {"ERR__ERROR_FORMAT_RESERVED", -2},
	"EXUBERANT_META_NIBBLE":   {"ERR__ERROR_FORMAT_EXUBERANT_META_NIBBLE", -3},
	"SIMPLE_HUFFMAN_ALPHABET": {"ERR__ERROR_FORMAT_SIMPLE_HUFFMAN_ALPHABET", -4},
	"SIMPLE_HUFFMAN_SAME":     {"ERR__ERROR_FORMAT_SIMPLE_HUFFMAN_SAME", -5},
	"CL_SPACE":                {"ERR__ERROR_FORMAT_CL_SPACE", -6},
	"HUFFMAN_SPACE":           {"ERR__ERROR_FORMAT_HUFFMAN_SPACE", -7},
	"CONTEXT_MAP_REPEAT":      {"ERR__ERROR_FORMAT_CONTEXT_MAP_REPEAT", -8},
	"BLOCK_LENGTH_1":          {"ERR__ERROR_FORMAT_BLOCK_LENGTH_1", -9},
	"BLOCK_LENGTH_2":          {"ERR__ERROR_FORMAT_BLOCK_LENGTH_2", -10},
	"TRANSFORM":               {"ERR__ERROR_FORMAT_TRANSFORM", -11},
	"DICTIONARY":              {"ERR__ERROR_FORMAT_DICTIONARY", -12},
	"WINDOW_BITS":             {"ERR__ERROR_FORMAT_WINDOW_BITS", -13},
	"PADDING_1":               {"ERR__ERROR_FORMAT_PADDING_1", -14},
	"PADDING_2":               {"ERR__ERROR_FORMAT_PADDING_2", -15},
	"DISTANCE":                {"ERR__ERROR_FORMAT_DISTANCE", -16},
	"DICTIONARY_NOT_SET":      {"ERR__ERROR_DICTIONARY_NOT_SET", -19},
	"INVALID_ARGUMENTS":       {"ERR__ERROR_INVALID_ARGUMENTS", -20},
	"CONTEXT_MODES":           {"ERR__ERROR_ALLOC_CONTEXT_MODES", -21},
	"TREE_GROUPS":             {"ERR__ERROR_ALLOC_TREE_GROUPS", -22},
	"CONTEXT_MAP":             {"ERR__ERROR_ALLOC_CONTEXT_MAP", -25},
	"RING_BUFFER_1":           {"ERR__ERROR_ALLOC_RING_BUFFER_1", -26},
	"RING_BUFFER_2":           {"ERR__ERROR_ALLOC_RING_BUFFER_2", -27},
	"BLOCK_TYPE_TREES":        {"ERR__ERROR_ALLOC_BLOCK_TYPE_TREES", -30},
	"UNREACHABLE":             {"ERR__ERROR_UNREACHABLE", -31},
}

// MaxInput bounds the input of one call.
const MaxInput = 1 << 30

// encoderOptions are Node's quality (0-11, anything else is 11) and
// window (10-24, 0 for Node's default 22) as the encoder takes them.
func encoderOptions(quality, lgwin int) brotli.WriterOptions {
	if quality < 0 || quality > 11 {
		quality = 11
	}
	if lgwin == 0 {
		lgwin = 22
	}
	return brotli.WriterOptions{Quality: quality, LGWin: min(max(lgwin, 10), 24)}
}

// writeChunks feeds in to w in pieces, stopping between them once stop
// (which may be nil) is set.
func writeChunks(w io.Writer, in []byte, stop *atomic.Bool) error {
	for rest := in; len(rest) > 0; {
		if stop != nil && stop.Load() {
			return errno.ECANCELED
		}
		k := min(len(rest), 64<<10)
		if _, err := w.Write(rest[:k]); err != nil {
			return encodeError(err)
		}
		rest = rest[k:]
	}
	return nil
}

// Compress compresses in (quality 0-11, lgwin 10-24 or 0 for Node's
// default 22), failing with ErrTooLarge past maxOut bytes of output. It
// stops early, between chunks of input, once stop (which may be nil) is
// set.
func Compress(in []byte, quality, lgwin, maxOut int, stop *atomic.Bool) ([]byte, error) {
	if len(in) > MaxInput {
		return nil, ErrTooLarge
	}
	out := limitbuf.New(maxOut)
	w := brotli.NewWriterOptions(out, encoderOptions(quality, lgwin))
	if err := writeChunks(w, in, stop); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, encodeError(err)
	}
	return out.Bytes(), nil
}

// Decompress decompresses in, failing with ErrTooLarge as soon as the
// output passes maxOut bytes: the decoder's own memory is its window (at
// most 16 MiB, large windows are not enabled) plus the output.
func Decompress(in []byte, maxOut int) ([]byte, error) {
	if len(in) > MaxInput {
		return nil, ErrTooLarge
	}
	out := limitbuf.New(maxOut)
	// The decoder streams into the bounded buffer: a bomb fails as soon
	// as its output passes maxOut, not after inflating to some larger cap.
	_, err := io.Copy(out, brotli.NewReader(bytes.NewReader(in)))
	if errors.Is(err, limitbuf.ErrLimit) {
		return nil, ErrTooLarge
	}
	if err != nil {
		return nil, decodeError(err)
	}
	return out.Bytes(), nil
}

// decodeError is Node's error for a failed decode.
func decodeError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Code: "Z_BUF_ERROR", Message: "unexpected end of file"}
	}
	name, _ := strings.CutPrefix(err.Error(), "brotli: ")
	e, ok := decodeErrors[name]
	if !ok {
		e = decodeErrors["PADDING_1"]
	}
	return &Error{Code: e.code, Message: "Decompression failed", Errno: e.errno}
}

func encodeError(err error) error {
	if errors.Is(err, limitbuf.ErrLimit) {
		return ErrTooLarge
	}
	return errCompress
}
