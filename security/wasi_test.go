package security_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// WASI errno values (wasi_snapshot_preview1).
const (
	wasiEBADF  = 8
	wasiEFAULT = 21
	wasiEINVAL = 28
)

// wasiCall is one hostile host call: the function, its parameter types
// ('i' i32, 'I' i64), the argument values and the errno it must return.
type wasiCall struct {
	fn    string
	sig   string
	args  []int64
	errno int
}

// leb128 appends v as a signed LEB128 number.
func leb128(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// uleb appends v as an unsigned LEB128 number.
func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func vec(items ...[]byte) []byte {
	b := uleb(nil, uint64(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func name(s string) []byte { return append(uleb(nil, uint64(len(s))), s...) }

func section(id byte, body []byte) []byte {
	return append(uleb([]byte{id}, uint64(len(body))), body...)
}

// pathAt is where wasiModule's memory holds the path "tmp".
const pathAt = 1024

// wasiModule assembles a WASI command whose _start makes the one call and
// exits with the errno it returned: the smallest guest that can pass any
// argument at all to a host function, which no C or Rust toolchain would.
func wasiModule(c wasiCall) []byte {
	params := []byte{}
	for _, r := range c.sig {
		if r == 'I' {
			params = append(params, 0x7e)
		} else {
			params = append(params, 0x7f)
		}
	}
	fnType := append(append([]byte{0x60}, uleb(nil, uint64(len(params)))...), params...)
	fnType = append(fnType, 1, 0x7f)
	types := vec(fnType, []byte{0x60, 1, 0x7f, 0}, []byte{0x60, 0, 0})
	imports := vec(
		append(append(name("wasi_snapshot_preview1"), name(c.fn)...), 0, 0),
		append(append(name("wasi_snapshot_preview1"), name("proc_exit")...), 0, 1),
	)
	code := []byte{0} // no locals
	for i, a := range c.args {
		if c.sig[i] == 'I' {
			code = leb128(append(code, 0x42), a)
		} else {
			code = leb128(append(code, 0x41), int64(int32(uint32(a))))
		}
	}
	code = append(code, 0x10, 0, 0x10, 1, 0x0b)
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, section(1, types)...)
	m = append(m, section(2, imports)...)
	m = append(m, section(3, vec([]byte{2}))...)
	m = append(m, section(5, vec([]byte{0, 1}))...) // one page, no maximum
	m = append(m, section(7, vec(append(name("_start"), 0, 2), append(name("memory"), 2, 0)))...)
	m = append(m, section(10, vec(append(uleb(nil, uint64(len(code))), code...)))...)
	// Data: the path "tmp" at pathAt, for calls that must get past their
	// path argument.
	seg := append([]byte{0, 0x41}, leb128(nil, pathAt)...)
	seg = append(append(seg, 0x0b), name("tmp")...)
	return append(m, section(11, vec(seg))...)
}

// WASI calls with out-of-range pointers and lengths, huge iovec and
// subscription counts and negative or unknown descriptors end in EFAULT,
// EINVAL or EBADF; the host allocates nothing the guest's memory does not
// already hold.
func TestWASIArgumentAbuse(t *testing.T) {
	const top = 0xFFFFFFF0 // past a one-page memory
	calls := []wasiCall{
		{"fd_write", "iiii", []int64{1, top, 1, 0}, wasiEFAULT},
		{"fd_write", "iiii", []int64{1, 0, 0x7FFFFFFF, 0}, wasiEINVAL},
		{"fd_write", "iiii", []int64{1, 0, 0xFFFFFFFF, 0}, wasiEINVAL},
		{"fd_write", "iiii", []int64{1, 0, 1, top}, wasiEFAULT},
		{"fd_write", "iiii", []int64{-1, 0, 1, 0}, wasiEBADF},
		{"fd_write", "iiii", []int64{0x7FFFFFFF, 0, 1, 0}, wasiEBADF},
		{"fd_read", "iiii", []int64{0, 0, 1 << 20, 0}, wasiEINVAL},
		{"fd_read", "iiii", []int64{-7, 0, 1, 0}, wasiEBADF},
		{"fd_pread", "iiiIi", []int64{0, 0, 1, -1, 0}, wasiEINVAL},
		{"fd_seek", "iIii", []int64{-1, 0, 0, 0}, wasiEBADF},
		{"fd_close", "i", []int64{-2}, wasiEBADF},
		{"fd_renumber", "ii", []int64{1, -1}, wasiEBADF},
		{"fd_readdir", "iiiIi", []int64{3, 0, 0xFFFFFFFF, 0, 0}, wasiEFAULT},
		{"fd_prestat_dir_name", "iii", []int64{3, 0, 0xFFFFFFFF}, wasiEFAULT},
		{"path_open", "iiiiiIIii", []int64{3, 0, top, 0x7FFFFFFF, 0, -1, -1, 0, 0}, wasiEFAULT},
		{"path_open", "iiiiiIIii", []int64{-5, 0, pathAt, 3, 0, -1, -1, 0, 0}, wasiEBADF},
		{"path_open", "iiiiiIIii", []int64{3, 0, pathAt, 3, 0, -1, -1, 0, top}, wasiEFAULT},
		{"path_readlink", "iiiiii", []int64{3, pathAt, 3, 0, 0xFFFFFFFF, 0}, wasiEFAULT},
		{"path_rename", "iiiiii", []int64{3, top, 16, 3, 0, 1}, wasiEFAULT},
		{"args_get", "ii", []int64{top, 0}, wasiEFAULT},
		{"environ_get", "ii", []int64{0, top}, wasiEFAULT},
		{"args_sizes_get", "ii", []int64{0xFFFFFFFE, 0}, wasiEFAULT},
		{"random_get", "ii", []int64{0, 0xFFFFFFFF}, wasiEFAULT},
		{"random_get", "ii", []int64{0xFFFF, 2}, wasiEFAULT},
		{"clock_time_get", "iIi", []int64{0, 0, top}, wasiEFAULT},
		{"clock_time_get", "iIi", []int64{0x7FFFFFFF, 0, 0}, wasiEINVAL},
		{"poll_oneoff", "iiii", []int64{0, 0, 0x7FFFFFFF, 0}, wasiEINVAL},
		{"poll_oneoff", "iiii", []int64{0, 0, 4096, 0}, wasiEFAULT},
		{"sock_recv", "iiiiii", []int64{-1, 0, 1, 0, 0, 0}, wasiEBADF},
	}
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Limits: secexec.Limits{CPUTime: 5 * time.Second}})
	ctx := context.Background()
	for i, c := range calls {
		t.Run(fmt.Sprintf("%s%v", c.fn, c.args), func(t *testing.T) {
			path := fmt.Sprintf("/tmp/abuse%d", i)
			if err := vm.FS().WriteFile(ctx, path, wasiModule(c), 0o755); err != nil {
				t.Fatal(err)
			}
			r := run(t, vm, []string{path}, nil)
			if r.ExitCode != c.errno {
				t.Errorf("errno %d, want %d (stderr %q)", r.ExitCode, c.errno, trunc(r.Stderr))
			}
		})
	}
	// A call that succeeds, so the module builder itself is checked.
	if err := vm.FS().WriteFile(ctx, "/tmp/ok", wasiModule(wasiCall{"fd_write", "iiii", []int64{1, 0, 0, 0}, 0}), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, vm, []string{"/tmp/ok"}, nil); r.ExitCode != 0 {
		t.Errorf("a valid call: exit %d %q", r.ExitCode, r.Stderr)
	}
	usable(t, vm)
}
