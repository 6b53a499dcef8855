package proto

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"testing"

	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// samples holds one valid message of every type.
func samples() []Frame {
	tok := bytes.Repeat([]byte{7}, TokenSize)
	return []Frame{
		{THello, 0, &Hello{Version: Version, Token: tok}},
		{TWelcome, 0, &Welcome{Version: Version, PID: 42}},
		{TFatal, 0, &Fatal{Err: *ErrorOf(ErrAuth)}},
		{TResponse, 1, &Response{VM: 3}},
		{TResponse, 2, &Response{Err: ErrorOf(errno.Path("open", "/x", errno.ENOENT))}},
		{TResponse, 3, &Response{Dir: "/w", Entries: []DirEntry{{Name: "a", Type: 0o040000}, {Name: "\xff\xfe", Type: 0o100000}}}},
		{TResponse, 4, &Response{Stat: &Stat{Mode: 0o100644, Size: 5, Mtime: 1e18}}},
		{TResponse, 5, &Response{Exit: &Exit{Code: 124, Outcome: "timed_out", Duration: 5, Note: []byte("CPU time limit exceeded\n")}}},
		{TResponse, 6, &Response{Data: []byte("hello"), Target: "t", PID: 9}},
		{TCancel, 7, &Cancel{}},
		{TData, 8, &Data{Fd: FdStdout, Bytes: []byte{0, 1, 2, 0xff}}},
		{TData, 8, &Data{Fd: FdStderr, EOF: true}},
		{TCredit, 8, &Credit{Fd: FdStdout, N: Window}},
		{TClose, 8, &Close{Fd: FdStdin, Err: ErrorOf(errno.EPIPE)}},
		{TExit, 9, &Exit{Code: 137, Signal: "SIGKILL"}},
		{TVMEvent, 10, &VMEvent{Event: VMClosed, Reason: "bye"}},
		{TAudit, 10, &Audit{Time: 1, Domain: "fs", Op: "write", Target: "/etc/passwd", Rule: -1}},
		{TCreateVM, 11, &CreateVM{Permissions: []byte(`{"fs":[]}`), Limits: kernel.Limits{FSBytes: 1 << 20},
			Mounts: []Mount{{Path: "/mnt", HostDir: "/tmp", ReadOnly: true}}, Cwd: "/w", Hostname: "h", Audit: true}},
		{TCloseVM, 12, &VMRef{VM: 3}},
		{TReadFile, 13, &PathOp{VM: 3, Name: "/a", Limit: 100}},
		{TMkdir, 14, &PathOp{VM: 3, Name: "/a", Mode: 0o755}},
		{TMkdirAll, 15, &PathOp{VM: 3, Name: "/a/b", Mode: 0o755}},
		{TReadDir, 16, &PathOp{VM: 3, Name: "/"}},
		{TStat, 17, &PathOp{VM: 3, Name: "/"}},
		{TLstat, 18, &PathOp{VM: 3, Name: "/"}},
		{TRemove, 19, &PathOp{VM: 3, Name: "/a"}},
		{TRemoveAll, 20, &PathOp{VM: 3, Name: "/a"}},
		{TRename, 21, &TwoPaths{VM: 3, Old: "/a", New: "/b"}},
		{TSymlink, 22, &TwoPaths{VM: 3, Old: "t", New: "/l"}},
		{TReadlink, 23, &PathOp{VM: 3, Name: "/l"}},
		{TChmod, 24, &PathOp{VM: 3, Name: "/a", Mode: 0o4755}},
		{TMount, 25, &MountReq{VM: 3, Mount: Mount{Path: "/m"}}},
		{TUnmount, 26, &PathOp{VM: 3, Name: "/m"}},
		{TWriteFile, 27, &WriteFile{VM: 3, Name: "/f", Perm: 0o644, Size: 10, Data: []byte("01234")}},
		{TReadFile, 46, &PathOp{VM: 3, Name: "l/../a", Limit: 100, Offset: 5, Chunk: true, Guest: true}},
		{TWriteFile, 47, &WriteFile{VM: 3, Name: "/f", Size: 1, Data: []byte("x"), Offset: 9, At: true, Guest: true}},
		{TRename, 48, &TwoPaths{VM: 3, Old: "/a", New: "/b", Guest: true}},
		{TWatch, 49, &Watch{VM: 3, Path: "/w", Guest: true}},
		{TRun, 28, &Run{VM: 3, Argv: []string{"echo", "hi"}, Env: []string{"A=1"}, Cwd: "/", Timeout: 1e9, Stdin: true}},
		{TSpawn, 29, &Spawn{VM: 3, Argv: []string{"cat"}}},
		{TDial, 33, &Dial{VM: 3, Port: 8080}},
		{TWatch, 36, &Watch{VM: 3, Path: "/w", Recursive: true}},
		{TSpawn, 34, &Spawn{VM: 3, Argv: []string{"bash"}, PTY: &Winsize{Rows: 24, Cols: 80}}},
		{TResize, 35, &Resize{Proc: 34, Rows: 50, Cols: 132}},
		{TSnapshot, 36, &Snapshot{VM: 3, Store: "/s", Meta: []byte("{}")}},
		{TCreateVM, 37, &CreateVM{FromStore: "/s", FromID: "ab", ForkOf: 2}},
		{TSnapshot, 38, &Snapshot{VM: 3, Store: "s3://b/p?endpoint=http%3A%2F%2F127.0.0.1%3A9000", Auth: &StoreAuth{AccessKeyID: "k", SecretAccessKey: "s", SessionToken: "t"}}},
		{TCreateVM, 39, &CreateVM{FromStore: "s3://b/p", FromID: "ab", FromAuth: &StoreAuth{AccessKeyID: "k", SecretAccessKey: "s"}}},
		{TSignal, 30, &Signal{Proc: 29, Sig: 15}},
		{TMetrics, 31, &Metrics{}},
		{TResponse, 31, &Response{Data: []byte("# TYPE secexec_runs_total counter\nsecexec_runs_total{outcome=\"succeeded\"} 3\n")}},
		{TNewContext, 40, &NewContext{VM: 3, Env: []string{"A=1"}, Cwd: "/w", MaxOutput: 1 << 20}},
		{TResponse, 40, &Response{Context: 1, PID: 12}},
		{TEvaluate, 41, &Evaluate{Context: 1, Expr: "let x = 1; x + 1", Timeout: 1e9}},
		{TResponse, 41, &Response{Value: []byte("2"), Stdout: []byte("out\n"), Stderr: []byte{0xff}, Truncated: true}},
		{TResponse, 42, &Response{Err: ErrorOf(&jsctx.ThrownError{Stack: "Error: x\n    at [context]:1:7"}), Stdout: []byte("before\n")}},
		{TResponse, 43, &Response{Err: ErrorOf(jsctx.TimeoutErr(context.DeadlineExceeded))}},
		{TResponse, 44, &Response{Err: ErrorOf(&jsctx.DeadError{Reason: "JavaScript heap out of memory"})}},
		{TCloseContext, 45, &ContextRef{Context: 1}},
		{TToolCall, 1, &ToolCall{VM: 3, Name: "search", Args: []byte(`{"q":"x"}`), Pid: 7, Timeout: 3e10}},
		{TToolResult, 1, &ToolResult{Result: []byte(`[1,2]`)}},
		{TToolResult, 2, &ToolResult{Err: ErrorOf(&kernel.ToolError{Code: kernel.ToolFailed, Tool: "search", Message: "down"})}},
	}
}

func TestRoundTrip(t *testing.T) {
	seen := map[Type]bool{}
	for _, f := range samples() {
		seen[f.Type] = true
		b, err := Append(nil, f.Type, f.ID, f.Body)
		if err != nil {
			t.Fatalf("%s: %v", f.Type, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: decode: %v", f.Type, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("%s: got %#v want %#v", f.Type, got.Body, f.Body)
		}
		// The same through a Reader.
		got, err = NewReader(bytes.NewReader(b)).Read()
		if err != nil || !reflect.DeepEqual(got, f) {
			t.Errorf("%s: reader: %v %#v", f.Type, err, got.Body)
		}
	}
	for t2 := range typeNames {
		if !seen[t2] {
			t.Errorf("no sample of %s", t2)
		}
	}
}

func frame(t Type, id uint64, body []byte) []byte {
	b := make([]byte, HeaderSize, HeaderSize+len(body))
	binary.BigEndian.PutUint32(b, uint32(HeaderSize-4+len(body)))
	b[4] = byte(t)
	binary.BigEndian.PutUint64(b[5:], id)
	return append(b, body...)
}

func TestDecodeRejects(t *testing.T) {
	valid, _ := encMode.Marshal(&Data{Fd: 1, Bytes: []byte("x")})
	huge := make([]byte, HeaderSize)
	binary.BigEndian.PutUint32(huge, MaxFrame+1)
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"short header", []byte{0, 0, 0, 9, 6}},
		{"length mismatch", append(frame(TData, 1, valid), 0)},
		{"too large", huge},
		{"unknown type 0", frame(0, 1, valid)},
		{"unknown type 14", frame(14, 1, valid)},
		{"unknown type 57", frame(57, 1, valid)},
		{"negative eval timeout", frame(TEvaluate, 1, []byte{0xa2, 0x01, 0x01, 0x03, 0x20})},
		{"evaluate id 0", frame(TEvaluate, 0, []byte{0xa1, 0x01, 0x01})},
		{"tool call id 0", frame(TToolCall, 0, []byte{0xa1, 0x01, 0x01})},
		{"negative tool timeout", frame(TToolCall, 1, []byte{0xa1, 0x05, 0x20})},
		{"context output over the bound", frame(TNewContext, 1, []byte{0xa1, 0x04, 0x1a, 0x10, 0x00, 0x00, 0x00})},
		{"unknown type 255", frame(255, 1, valid)},
		{"not cbor", frame(TData, 1, []byte{0xff, 0xff})},
		{"empty body", frame(TData, 1, nil)},
		{"trailing bytes", frame(TData, 1, append(append([]byte(nil), valid...), 0))},
		{"unknown field", frame(TData, 1, []byte{0xa2, 0x01, 0x01, 0x09, 0x01})},
		{"duplicate key", frame(TData, 1, []byte{0xa2, 0x01, 0x01, 0x01, 0x02})},
		{"indefinite map", frame(TData, 1, []byte{0xbf, 0x01, 0x01, 0xff})},
		{"tag", frame(TData, 1, []byte{0xc1, 0xa1, 0x01, 0x01})},
		{"wrong field type", frame(TData, 1, []byte{0xa1, 0x01, 0x61, 'x'})},
		{"negative into uint", frame(TData, 1, []byte{0xa1, 0x01, 0x20})},
		{"bad fd", frame(TData, 1, []byte{0xa1, 0x01, 0x09})},
		{"id 0 data", frame(TData, 0, valid)},
		{"zero credit", frame(TCredit, 1, []byte{0xa2, 0x01, 0x01, 0x02, 0x00})},
		{"credit fd 3", frame(TCredit, 1, []byte{0xa2, 0x01, 0x03, 0x02, 0x01})},
		{"short token", frame(THello, 0, []byte{0xa2, 0x01, 0x01, 0x02, 0x41, 0x00})},
		{"request id 0", frame(TStat, 0, []byte{0xa2, 0x01, 0x01, 0x02, 0x61, '/'})},
		{"bad error kind", frame(TFatal, 0, []byte{0xa1, 0x01, 0xa1, 0x01, 0x18, 0xff})},
		{"negative size", frame(TWriteFile, 1, []byte{0xa1, 0x04, 0x20})},
		{"metrics with a field", frame(TMetrics, 1, []byte{0xa1, 0x01, 0x01})},
		{"metrics id 0", frame(TMetrics, 0, []byte{0xa0})},
	} {
		_, err := Decode(tc.frame)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: err = %v, want a protocol error", tc.name, err)
		}
	}
}

func TestReaderLimits(t *testing.T) {
	// An announced length over the limit fails before any body is read.
	hdr := make([]byte, HeaderSize)
	binary.BigEndian.PutUint32(hdr, MaxFrame+1)
	r := NewReader(io.MultiReader(bytes.NewReader(hdr), eofAfterPanic{}))
	if _, err := r.Read(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
	// A frame cut short.
	b, _ := Append(nil, TData, 1, &Data{Fd: 1, Bytes: []byte("hello")})
	if _, err := NewReader(bytes.NewReader(b[:len(b)-1])).Read(); err != io.ErrUnexpectedEOF {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(b[:3])).Read(); err != io.ErrUnexpectedEOF {
		t.Fatalf("truncated header: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(nil)).Read(); err != io.EOF {
		t.Fatalf("empty: %v", err)
	}
	// A frame just under the limit passes; the encoder refuses one over.
	big := make([]byte, MaxChunk)
	if _, err := Append(nil, TData, 1, &Data{Fd: 1, Bytes: big}); err != nil {
		t.Fatal(err)
	}
	if _, err := Append(nil, TResponse, 1, &Response{Target: string(make([]byte, MaxFrame))}); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("encode oversized: %v", err)
	}
	// Several frames in a row, large and small, through one Reader.
	var stream []byte
	for i := range 5 {
		stream, _ = Append(stream, TData, uint64(i+1), &Data{Fd: 1, Bytes: make([]byte, i*200<<10)})
	}
	rd := NewReader(bytes.NewReader(stream))
	for i := range 5 {
		f, err := rd.Read()
		if err != nil || f.ID != uint64(i+1) || len(f.Body.(*Data).Bytes) != i*200<<10 {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
}

// eofAfterPanic fails the test run if anything reads from it.
type eofAfterPanic struct{}

func (eofAfterPanic) Read([]byte) (int, error) { panic("read past an oversized header") }

func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 100 {
				if err := w.Write(TData, uint64(g*1000+i+1), &Data{Fd: 1, Bytes: bytes.Repeat([]byte{byte(g)}, 1000+i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	r := NewReader(&buf)
	for range 400 {
		f, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		d := f.Body.(*Data)
		g := (f.ID - 1) / 1000
		if len(d.Bytes) != 1000+int((f.ID-1)%1000) || d.Bytes[0] != byte(g) {
			t.Fatalf("interleaved frame %d", f.ID)
		}
	}
}

func TestErrorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		err   error
		is    []error
		check func(error) bool
	}{
		{err: errno.ENOENT, is: []error{errno.ENOENT, fs.ErrNotExist}},
		{err: errno.Path("open", "/a\xff", errno.EACCES), is: []error{errno.EACCES, fs.ErrPermission},
			check: func(e error) bool { var pe *errno.PathError; return errors.As(e, &pe) && pe.Path == "/a\xff" }},
		{err: fmt.Errorf("vm: mount /x: %w", errno.Path("mkdir", "/x", errno.EROFS)), is: []error{errno.EROFS},
			check: func(e error) bool { var pe *errno.PathError; return errors.As(e, &pe) && pe.Op == "mkdir" }},
		{err: &policy.DeniedError{Domain: policy.DomainFS, Op: "write", Target: "/etc/x", Rule: 2}, is: []error{errno.EACCES},
			check: func(e error) bool { var de *policy.DeniedError; return errors.As(e, &de) && de.Rule == 2 }},
		{err: &policy.ParseError{Where: "fs[0]", Reason: "bad"}, is: []error{policy.ErrInvalidPolicy, errno.EINVAL}},
		{err: &kernel.NotFoundError{Name: "nope"}, is: []error{errno.ENOENT},
			check: func(e error) bool { var nf *kernel.NotFoundError; return errors.As(e, &nf) && nf.Name == "nope" }},
		{err: &vmhost.TooLargeError{What: "file /f", Size: 10, Limit: 5},
			check: func(e error) bool { var tl *vmhost.TooLargeError; return errors.As(e, &tl) && tl.Size == 10 }},
		{err: vmhost.ErrClosed, is: []error{vmhost.ErrClosed}},
		{err: fmt.Errorf("run: %w", context.Canceled), is: []error{context.Canceled}},
		{err: context.DeadlineExceeded, is: []error{context.DeadlineExceeded}},
		{err: ErrNoVM, is: []error{ErrNoVM}},
		{err: fmt.Errorf("spawn x: argument list of 5 bytes: %w", errno.E2BIG), is: []error{errno.E2BIG}},
		{err: errors.New("plain"), is: nil},
		{err: &jsctx.ThrownError{Stack: "TypeError: x\n    at [context]:1:1"},
			check: func(e error) bool {
				var th *jsctx.ThrownError
				return errors.As(e, &th) && th.Stack == "TypeError: x\n    at [context]:1:1"
			}},
		{err: &jsctx.DeadError{Reason: "JavaScript heap out of memory"},
			check: func(e error) bool {
				var d *jsctx.DeadError
				return errors.As(e, &d) && d.Reason == "JavaScript heap out of memory"
			}},
		{err: jsctx.TimeoutErr(context.DeadlineExceeded), is: []error{jsctx.ErrTimeout, context.DeadlineExceeded}},
		{err: jsctx.TimeoutErr(context.Canceled), is: []error{jsctx.ErrTimeout, context.Canceled}},
		{err: jsctx.ErrClosed, is: []error{jsctx.ErrClosed}},
		{err: &kernel.ToolError{Code: kernel.ToolTimeout, Tool: "t", Message: "slow", Err: context.DeadlineExceeded},
			check: func(e error) bool {
				var te *kernel.ToolError
				return errors.As(e, &te) && te.Code == kernel.ToolTimeout && te.Tool == "t" && te.Message == "slow"
			}},
	} {
		b, err := Append(nil, TResponse, 1, &Response{Err: ErrorOf(tc.err)})
		if err != nil {
			t.Fatal(err)
		}
		f, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got := f.Body.(*Response).Err.Err()
		if got.Error() != tc.err.Error() {
			t.Errorf("text %q, want %q", got, tc.err)
		}
		for _, target := range tc.is {
			if !errors.Is(got, target) {
				t.Errorf("%v: not Is %v", tc.err, target)
			}
		}
		if tc.check != nil && !tc.check(got) {
			t.Errorf("%v: As check failed on %#v", tc.err, got)
		}
	}
	if ErrorOf(nil) != nil || (*Error)(nil).Err() != nil {
		t.Error("nil error did not stay nil")
	}
}
