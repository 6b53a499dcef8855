package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// defaultMaxValue bounds the bytes one input value (or one raw line, or
// everything --slurp reads) may span, so a hostile input fails cleanly
// instead of growing memory without limit.
const defaultMaxValue = 256 << 20

var errTooLarge = errors.New("input value too large")

// parseError is malformed JSON input: jq reports it and stops reading.
type parseError struct{ msg string }

func (e *parseError) Error() string { return e.msg }

// openError is an input file that could not be opened; jq reports it,
// carries on with the next file and exits 2 at the end.
type openError struct {
	name string
	err  error
}

func (e *openError) Error() string {
	return fmt.Sprintf("Could not open %s: %s", e.name, sysmsg.Text(e.err))
}

// lineReader counts the bytes and newlines that pass through it, keeping
// the offsets of newlines the decoder has read ahead, so a value's line
// number can be computed the way jq does: jq feeds its parser whole lines,
// so an error's location is the line on which the value ended.
type lineReader struct {
	r        io.Reader
	off      int64   // bytes read so far
	lines    int     // newlines before pending[0] (or before off)
	pending  []int64 // offsets of newlines read but not yet counted
	limit    int64   // max bytes past mark
	mark     int64   // offset where the current value began
	overflow bool
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.off-l.mark >= l.limit {
		l.overflow = true
		return 0, errTooLarge
	}
	if int64(len(p)) > l.limit-(l.off-l.mark) {
		p = p[:l.limit-(l.off-l.mark)]
	}
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.pending = append(l.pending, l.off+int64(i))
		}
	}
	l.off += int64(n)
	return n, err
}

// lineAt returns jq's line number for a value ending at offset end and
// forgets the newlines before it.
func (l *lineReader) lineAt(end int64) int {
	i := 0
	for i < len(l.pending) && l.pending[i] < end {
		i++
	}
	count := l.lines + i
	if i < len(l.pending) {
		// The newline ending the value's line has been read: jq's
		// line-at-a-time reader would have counted it.
		count++
	}
	l.lines += i
	l.pending = append(l.pending[:0], l.pending[i:]...)
	return count
}

// position is a line and column for a parse error at offset off.
func (l *lineReader) position(off int64) (int, int) {
	line := l.lines + 1
	lastNL := int64(-1)
	for _, p := range l.pending {
		if p >= off {
			break
		}
		line++
		lastNL = p
	}
	return line, int(off - lastNL - 1)
}

// source is one input: a file or standard input.
type source struct {
	name string // "<stdin>" or the file name
	open func() (io.ReadCloser, error)
}

// inputs produces input values from a list of sources in order, as jq's
// jq_util_input does; the main loop and the program's input/inputs
// builtins share it. It implements gojq.Iter.
type inputs struct {
	sources  []source
	raw      bool // -R: each line is a string
	maxValue int64

	cur     io.ReadCloser
	lr      *lineReader
	dec     *json.Decoder
	br      *bufio.Reader
	name    string // current source name, "" before the first
	line    int    // line of the last value read
	failed  bool   // a file could not be opened
	stopped bool   // a parse error ended reading
	warn    func(error)

	slurping bool  // --slurp: maxValue bounds all input together
	used     int64 // bytes read from finished sources while slurping
}

// Next returns the next value, or an error value the caller reports.
// Open failures are reported through warn and skipped.
func (in *inputs) Next() (any, bool) {
	for {
		if in.stopped {
			return nil, false
		}
		if in.cur == nil {
			if len(in.sources) == 0 {
				return nil, false
			}
			src := in.sources[0]
			in.sources = in.sources[1:]
			rc, err := src.open()
			if err != nil {
				in.failed = true
				in.warn(&openError{name: src.name, err: err})
				continue
			}
			in.cur, in.name = rc, src.name
			in.lr = &lineReader{r: rc, limit: in.maxValue - in.used}
			if in.raw {
				in.br = bufio.NewReaderSize(in.lr, 64<<10)
			} else {
				in.dec = json.NewDecoder(in.lr)
				in.dec.UseNumber()
			}
		}
		v, err := in.next()
		if err == io.EOF {
			if in.slurping {
				in.used += in.lr.off
			}
			in.cur.Close()
			in.cur, in.dec, in.br = nil, nil, nil
			continue
		}
		if err != nil {
			in.stopped = true
			return err, true
		}
		return v, true
	}
}

func (in *inputs) next() (any, error) {
	if in.raw {
		line, err := in.br.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, in.readError(err)
		}
		end := in.lr.off - int64(in.br.Buffered())
		// Measured from the line's last byte, so its own newline counts
		// and a read-ahead newline does not.
		in.line = in.lr.lineAt(end - 1)
		in.mark(end)
		return strings.TrimSuffix(line, "\n"), nil
	}
	var v any
	if err := in.dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, in.readError(err)
	}
	end := in.dec.InputOffset()
	in.line = in.lr.lineAt(end)
	in.mark(end)
	return v, nil
}

// mark starts the size budget of the next value at offset end, except
// under --slurp, where one budget covers everything read.
func (in *inputs) mark(end int64) {
	if !in.slurping {
		in.lr.mark = end
	}
}

// readError turns a decoding failure into jq's wording.
func (in *inputs) readError(err error) error {
	if in.lr.overflow || errors.Is(err, errTooLarge) {
		return &parseError{msg: "Exceeds input size limit"}
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col := in.lr.position(se.Offset)
		return &parseError{msg: fmt.Sprintf("%s at line %d, column %d", capitalize(se.Error()), line, col)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := in.lr.position(in.lr.off)
		return &parseError{msg: fmt.Sprintf("Unfinished JSON term at EOF at line %d, column %d", line, col)}
	}
	return &parseError{msg: sysmsg.Text(err)}
}

// location is where the last value came from, for error messages.
func (in *inputs) location() string {
	if in.name == "" {
		return "<unknown>"
	}
	return fmt.Sprintf("%s:%d", in.name, in.line)
}

// Close releases the current source.
func (in *inputs) Close() error {
	if in.cur != nil {
		err := in.cur.Close()
		in.cur = nil
		return err
	}
	return nil
}

// slurp reads every remaining value into one array (or, with -R, all text
// into one string), bounded by maxValue bytes in total.
func (in *inputs) slurp() (any, error) {
	if in.raw {
		var b bytes.Buffer
		for len(in.sources) > 0 {
			src := in.sources[0]
			in.sources = in.sources[1:]
			rc, err := src.open()
			if err != nil {
				in.failed = true
				in.warn(&openError{name: src.name, err: err})
				continue
			}
			in.name = src.name
			_, err = io.Copy(&b, io.LimitReader(rc, in.maxValue-int64(b.Len())+1))
			rc.Close()
			if err != nil {
				return nil, &parseError{msg: sysmsg.Text(err)}
			}
			if int64(b.Len()) > in.maxValue {
				return nil, &parseError{msg: "Exceeds input size limit"}
			}
		}
		return b.String(), nil
	}
	in.slurping = true
	var all []any
	for {
		v, ok := in.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok {
			return nil, err
		}
		all = append(all, v)
	}
	if all == nil {
		all = []any{}
	}
	return all, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
