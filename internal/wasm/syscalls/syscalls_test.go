package syscalls

import (
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/experimental/wazerotest"
	"github.com/tetratelabs/wazero/sys"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// newKernel returns a kernel over a memory filesystem with the account
// files, for calling host functions as its init process.
func newKernel(t testing.TB, passwd, group string) *kernel.Kernel {
	t.Helper()
	ctx := context.Background()
	v, err := vfs.New(ctx, memfs.New(memfs.Options{Quota: vfs.NewQuota(8<<20, 1024)}), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{VFS: v, Limits: kernel.Limits{Processes: 8, FDsPerProcess: 64}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/etc", "/tmp", "/workspace"} {
		if err := v.Mkdir(ctx, vfs.Root, d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"/etc/passwd": passwd, "/etc/group": group} {
		f, err := v.Open(ctx, vfs.Root, name, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(ctx, []byte(data)); err != nil {
			t.Fatal(err)
		}
		f.DecRef()
	}
	t.Cleanup(func() { _ = k.Shutdown(context.Background()) })
	return k
}

const (
	testPasswd = "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n# comment\nbroken line\n"
	testGroup  = "root:x:0:\nuser:x:1000:user\n"
)

// allFuncs lists every host function of every module.
func allFuncs() []hostFunc {
	var out []hostFunc
	for _, fs := range [][]hostFunc{wasiFuncs(), processFuncs(), fsFuncs(), userFuncs(), ttyFuncs(), netFuncs()} {
		out = append(out, fs...)
	}
	return out
}

// call invokes a host function as wazero would and reports a panic that
// is not one of the two deliberate unwinds (exit, exec).
func call(ctx context.Context, f hostFunc, mod *wazerotest.Module, stack []uint64) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case *sys.ExitError, *ExecRequest:
		case error:
			err = r
		default:
			err = errors.New("panic")
			_ = r
		}
	}()
	f.fn(ctx, mod, stack)
	return nil
}

func TestErrnoMapping(t *testing.T) {
	for e := errno.Errno(1); e < 200; e++ {
		if e.Name() == "E"+itoa(int(e)) {
			continue // not a defined errno
		}
		w := ErrnoOf(e)
		if w == ESUCCESS || (w == EIO && e != errno.EIO) {
			t.Errorf("%s maps to %d", e.Name(), w)
		}
	}
	if ErrnoOf(nil) != ESUCCESS || ErrnoOf(errors.New("host error text")) != EIO {
		t.Error("nil or foreign errors mis-mapped")
	}
	if ErrnoOf(errno.Path("open", "/x", errno.ENOENT)) != ENOENT {
		t.Error("wrapped errno not unwrapped")
	}
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestSplitNulAndEnv(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a\x00", []string{"a"}},
		{"a\x00b\x00", []string{"a", "b"}},
		{"a\x00\x00b\x00", []string{"a", "", "b"}},
		{"a", []string{"a"}},
		{"\x00", []string{""}},
	} {
		if got := splitNul([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitNul(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	got := envList([]string{"A=1", "noequals", "=empty", "B=", "C=x=y"})
	if want := []string{"A=1", "B=", "C=x=y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("envList = %q, want %q", got, want)
	}
}

func TestSigsetConversion(t *testing.T) {
	// Bit 0 of lo is signal 1; SIGKILL is bit 8.
	if got := sigsetToKernel(1<<8|1<<14, 0); got != 1<<uint(kernel.SIGKILL)|1<<uint(kernel.SIGTERM) {
		t.Errorf("sigsetToKernel = %#x", got)
	}
	lo, hi := sigsetFromKernel(1 << uint(kernel.SIGTERM))
	if lo != 1<<14 || hi != 0 {
		t.Errorf("sigsetFromKernel = %#x %#x", lo, hi)
	}
}

func TestAccountDatabase(t *testing.T) {
	k := newKernel(t, testPasswd, testGroup)
	ctx := context.Background()
	s := NewState(ctx, k.Init(), []string{"t"}, nil)
	defer s.Close()
	lines := s.accountLines(ctx, passwdFile)
	if want := []string{"root:x:0:0:root:/root:/bin/sh", "user:x:1000:1000::/home/user:/bin/sh"}; !reflect.DeepEqual(lines, want) {
		t.Errorf("passwd lines %q", lines)
	}
	if g := s.accountLines(ctx, groupFile); len(g) != 2 || field(g[1], 3) != "user" {
		t.Errorf("group lines %q", g)
	}
}

// hostileStack is the fuzzer's view of a call: a function index, ten
// argument words, and initial memory contents.
func fuzzCall(t *testing.T, k *kernel.Kernel, s *State, fns []hostFunc, data []byte) {
	if len(data) < 1 {
		return
	}
	f := fns[int(data[0])%len(fns)]
	data = data[1:]
	stack := make([]uint64, max(len(f.params), len(f.results), 1))
	for i := range stack {
		if len(data) >= 4 {
			// Small values hit real descriptors and in-range pointers
			// often; the rest of the words are arbitrary.
			v := binary.LittleEndian.Uint32(data)
			if v&0x80 == 0 {
				v &= 0xFFFF
			}
			stack[i] = uint64(v)
			data = data[4:]
		}
	}
	mem := wazerotest.NewFixedMemory(1 << 16)
	buf, _ := mem.Read(0, 1<<16)
	copy(buf, data)
	mod := wazerotest.NewModule(mem)
	ctx, cancel := context.WithTimeout(WithState(context.Background(), s), 20*time.Millisecond)
	defer cancel()
	if err := call(ctx, f, mod, stack); err != nil {
		t.Fatalf("%s%v: %v", f.name, stack, err)
	}
	// Leave init's table as it was: only the preopen stays.
	for _, fd := range k.Init().FDs().FDs() {
		if s.preopens[0].fd != fd {
			_ = k.Init().Close(fd)
		}
	}
}

// FuzzHostCall calls every host function with arbitrary arguments and
// guest memory: none may panic or block beyond its context.
func FuzzHostCall(f *testing.F) {
	fns := allFuncs()
	for i := range fns {
		seed := []byte{byte(i)}
		for j := 0; j < 10; j++ {
			seed = binary.LittleEndian.AppendUint32(seed, uint32(j*64))
		}
		f.Add(append(seed, "/etc/passwd\x00user\x00"...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k := newKernel(t, testPasswd, testGroup)
		s := NewState(context.Background(), k.Init(), []string{"fuzz", "a"}, []string{"PATH=/bin"})
		defer s.Close()
		fuzzCall(t, k, s, fns, data)
	})
}

// FuzzAccountDB parses arbitrary /etc/passwd and /etc/group contents.
func FuzzAccountDB(f *testing.F) {
	f.Add([]byte(testPasswd), "user", uint32(1000))
	f.Add([]byte("::::::\n:x:0:0::/:/bin/sh\n"), "", uint32(0))
	f.Add([]byte("a:b\r\nc:d:e:f:g:h:i\n"), "c", uint32(4294967295))
	f.Fuzz(func(t *testing.T, passwd []byte, name string, uid uint32) {
		k := newKernel(t, string(passwd), string(passwd))
		s := NewState(context.Background(), k.Init(), nil, nil)
		defer s.Close()
		mem := wazerotest.NewFixedMemory(1 << 12)
		mem.Write(0, []byte(name))
		mod := wazerotest.NewModule(mem)
		ctx := WithState(context.Background(), s)
		for _, fn := range userFuncs() {
			var stack []uint64
			switch fn.name {
			case "getpwuid", "getgrgid", "getpwent", "getgrent":
				stack = []uint64{uint64(uid % 8), 512, 1024, 4000}
			case "getpwnam", "getgrnam":
				stack = []uint64{0, uint64(min(len(name), 400)), 512, 1024, 4000}
			default:
				continue
			}
			if err := call(ctx, fn, mod, stack); err != nil {
				t.Fatalf("%s: %v", fn.name, err)
			}
			if Errno(stack[0]) == ESUCCESS {
				n, _ := mem.ReadUint32Le(4000)
				line, _ := mem.Read(512, n)
				if n > 1024 || len(line) == 0 {
					t.Fatalf("%s wrote %d bytes", fn.name, n)
				}
			}
		}
	})
}

// A read or write of no bytes on a descriptor that is not open fails with
// EBADF, as on Linux, instead of succeeding for any number.
func TestZeroLengthIOChecksFD(t *testing.T) {
	k := newKernel(t, testPasswd, testGroup)
	s := NewState(context.Background(), k.Init(), nil, nil)
	defer s.Close()
	mod := wazerotest.NewModule(wazerotest.NewFixedMemory(1 << 12))
	ctx := WithState(context.Background(), s)
	byName := map[string]hostFunc{}
	for _, f := range allFuncs() {
		byName[f.name] = f
	}
	for _, name := range []string{"fd_read", "fd_write"} {
		for _, fd := range []uint32{0xFFFFFFFF, 0x7FFFFFFF, 77} {
			// One iovec of length zero at 0, nwritten at 64.
			stack := []uint64{uint64(fd), 0, 1, 64}
			if err := call(ctx, byName[name], mod, stack); err != nil {
				t.Fatal(err)
			}
			if Errno(stack[0]) != EBADF {
				t.Errorf("%s(%#x, no bytes): errno %d, want EBADF", name, fd, stack[0])
			}
		}
	}
}
