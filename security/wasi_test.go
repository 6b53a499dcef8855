package security_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/wasmgen"
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

// pathAt is where wasiModule's memory holds the path "tmp".
const pathAt = 1024

// wasiModule assembles a WASI command whose _start makes the one call and
// exits with the errno it returned: the smallest guest that can pass any
// argument at all to a host function, which no C or Rust toolchain would.
func wasiModule(c wasiCall) []byte {
	sig := wasmgen.Type{Results: []byte{wasmgen.I32}}
	var body []byte
	for i, a := range c.args {
		if c.sig[i] == 'I' {
			sig.Params = append(sig.Params, wasmgen.I64)
			body = append(body, wasmgen.I64Const(a)...)
		} else {
			sig.Params = append(sig.Params, wasmgen.I32)
			body = append(body, wasmgen.I32Const(int32(uint32(a)))...)
		}
	}
	body = append(append(body, wasmgen.Call(0)...), wasmgen.Call(1)...)
	return wasmgen.Module([]wasmgen.Import{
		{Module: "wasi_snapshot_preview1", Name: c.fn, Type: sig},
		{Module: "wasi_snapshot_preview1", Name: "proc_exit", Type: wasmgen.Type{Params: []byte{wasmgen.I32}}},
	}, []wasmgen.Func{{Body: body, Export: "_start"}}, 1, []wasmgen.Data{{Offset: pathAt, Bytes: []byte("tmp")}})
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
