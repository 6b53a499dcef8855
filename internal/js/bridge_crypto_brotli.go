package js

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

// brotliErrors maps the decoder's error names (as andybalholm/brotli
// prints them) to Node's codes and errno values. Node builds the code
// from the C name BROTLI_DECODER_ERROR_X by cutting "BROTLI_DECODER",
// hence the double underscore.
var brotliErrors = map[string]struct {
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

// brotliOp compresses (quality 0-11, lgwin 10-24, 0 for Node's default
// 22) or decompresses in, bounding the output to maxOut bytes: the
// decoder's own memory is its window (at most 16 MiB, large windows are
// not enabled) plus the output. Compression stops early, between chunks
// of input, once stop (which may be nil) is set.
func brotliOp(compress bool, in []byte, quality, lgwin, maxOut int, stop *atomic.Bool) ([]byte, error) {
	out := limitbuf.New(maxOut)
	if compress {
		if quality < 0 || quality > 11 {
			quality = 11
		}
		if lgwin == 0 {
			lgwin = 22
		}
		lgwin = min(max(lgwin, 10), 24)
		w := brotli.NewWriterOptions(out, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
		for rest := in; len(rest) > 0; {
			if stop != nil && stop.Load() {
				return nil, errno.ECANCELED
			}
			k := min(len(rest), 64<<10)
			if _, err := w.Write(rest[:k]); err != nil {
				if errors.Is(err, limitbuf.ErrLimit) {
					return nil, errTooLarge
				}
				return nil, zlibError("ERR_ZLIB_INITIALIZATION_FAILED", "Compression failed")
			}
			rest = rest[k:]
		}
		if err := w.Close(); err != nil {
			if errors.Is(err, limitbuf.ErrLimit) {
				return nil, errTooLarge
			}
			return nil, zlibError("ERR_ZLIB_INITIALIZATION_FAILED", "Compression failed")
		}
		return out.Bytes(), nil
	}
	rd := brotli.NewReader(bytes.NewReader(in))
	// The decoder streams into the bounded buffer: a bomb fails as soon
	// as its output passes maxOut, not after inflating to some larger cap.
	_, err := io.Copy(out, rd)
	if errors.Is(err, limitbuf.ErrLimit) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, brotliDecodeError(err)
	}
	return out.Bytes(), nil
}

// brotliDecodeError is Node's error for a failed decode.
func brotliDecodeError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return zlibError("Z_BUF_ERROR", "unexpected end of file")
	}
	name, _ := strings.CutPrefix(err.Error(), "brotli: ")
	if e, ok := brotliErrors[name]; ok {
		return brotliError(e.code, e.errno)
	}
	return brotliError("ERR__ERROR_FORMAT_PADDING_1", -14)
}

// brotliError carries Node's code and errno to JavaScript: "code\0Decompression failed\0errno".
func brotliError(code string, errno int) error {
	return guestError(code + "\x00Decompression failed\x00" + strconv.Itoa(errno))
}
