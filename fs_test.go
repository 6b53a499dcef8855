package secexec_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
)

func newVM(t *testing.T, opts secexec.Options) *secexec.VM {
	t.Helper()
	vm, err := secexec.NewVM(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vm.Close() })
	return vm
}

// newTestProgramsVM is newVM with the test programs (vmhosttest).
func newTestProgramsVM(t *testing.T, opts secexec.Options) *secexec.VM {
	t.Helper()
	vm, err := secexec.NewVMWithTestPrograms(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vm.Close() })
	return vm
}

func TestFSRoundTrip(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{})
	f := vm.FS()
	if err := f.MkdirAll(ctx, "/workspace/a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 256)
	for i := range data {
		data[i] = byte(i)
	}
	if err := f.WriteFile(ctx, "a/b/bin", data, 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadFile(ctx, "/workspace/a/b/bin")
	if err != nil || string(got) != string(data) {
		t.Fatalf("read back %q, %v", got, err)
	}
	fi, err := f.Stat(ctx, "/workspace/a/b/bin")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 256 || fi.Mode().Perm() != 0o640 || fi.Stat().UID != secexec.GuestUID {
		t.Fatalf("stat: size %d mode %v uid %d", fi.Size(), fi.Mode(), fi.Stat().UID)
	}
	if err := f.Symlink(ctx, "b/bin", "/workspace/a/link"); err != nil {
		t.Fatal(err)
	}
	if target, err := f.Readlink(ctx, "/workspace/a/link"); err != nil || target != "b/bin" {
		t.Fatalf("readlink %q %v", target, err)
	}
	if fi, err := f.Lstat(ctx, "/workspace/a/link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("lstat %v %v", fi, err)
	}
	if err := f.Rename(ctx, "/workspace/a/b/bin", "/workspace/a/moved"); err != nil {
		t.Fatal(err)
	}
	ents, err := f.ReadDir(ctx, "/workspace/a")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 3 || names[0] != "b" || names[1] != "link" || names[2] != "moved" {
		t.Fatalf("readdir %v", names)
	}
	if err := f.Chmod(ctx, "/workspace/a/moved", 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(ctx, "/workspace/a"); !errors.Is(err, errno.ENOTEMPTY) {
		t.Fatalf("remove non-empty: %v", err)
	}
	if err := f.RemoveAll(ctx, "/workspace/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "/workspace/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
	// The standard layout is there.
	for _, p := range []string{"/etc/passwd", "/etc/hostname", "/dev/null", "/tmp", "/home/user", "/proc"} {
		if _, err := f.Stat(ctx, p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestHostMount(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("from host"), 0o644); err != nil {
		t.Fatal(err)
	}
	vm := newVM(t, secexec.Options{Mounts: []secexec.Mount{{Path: "/mnt/ro", HostDir: dir, ReadOnly: true}}})
	got, err := vm.FS().ReadFile(ctx, "/mnt/ro/in.txt")
	if err != nil || string(got) != "from host" {
		t.Fatalf("%q %v", got, err)
	}
	if err := vm.FS().WriteFile(ctx, "/mnt/ro/new", []byte("x"), 0o644); !errors.Is(err, errno.EROFS) {
		t.Fatalf("write to ro mount: %v", err)
	}
	rw := t.TempDir()
	if err := vm.FS().Mount(ctx, secexec.Mount{Path: "/mnt/rw", HostDir: rw}); err != nil {
		t.Fatal(err)
	}
	if err := vm.FS().WriteFile(ctx, "/mnt/rw/out.txt", []byte("to host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "out.txt")); err != nil || string(b) != "to host" {
		t.Fatalf("host sees %q %v", b, err)
	}
	if err := vm.FS().Rename(ctx, "/mnt/rw/out.txt", "/workspace/out.txt"); !errors.Is(err, errno.EXDEV) {
		t.Fatalf("rename across mounts: %v", err)
	}
	if err := vm.FS().Unmount(ctx, "/mnt/rw"); err != nil {
		t.Fatal(err)
	}
	if _, err := vm.FS().Stat(ctx, "/mnt/rw/out.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after unmount: %v", err)
	}
}

func TestStorageLimitThenUsable(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Limits: secexec.Limits{FSBytes: 1 << 20, FSInodes: 200}})
	big := make([]byte, 2<<20)
	if err := vm.FS().WriteFile(ctx, "/workspace/big", big, 0o644); !errors.Is(err, errno.ENOSPC) {
		t.Fatalf("over quota: %v", err)
	}
	if err := vm.FS().RemoveAll(ctx, "/workspace/big"); err != nil {
		t.Fatal(err)
	}
	if err := vm.FS().WriteFile(ctx, "/workspace/small", []byte("ok"), 0o644); err != nil {
		t.Fatalf("after freeing: %v", err)
	}
	var err error
	for i := 0; i < 300 && err == nil; i++ {
		err = vm.FS().WriteFile(ctx, "/tmp/f"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil, 0o644)
	}
	if !errors.Is(err, errno.ENOSPC) {
		t.Fatalf("inode limit: %v", err)
	}
	if err := vm.FS().RemoveAll(ctx, "/tmp/faa"); err != nil {
		t.Fatal(err)
	}
	if err := vm.FS().WriteFile(ctx, "/workspace/again", []byte("ok"), 0o644); err != nil {
		t.Fatalf("after freeing an inode: %v", err)
	}
}

func TestExecCommandNotFound(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	res, err := vm.Exec(context.Background(), "definitely-not-a-command --flag", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 127 || res.Outcome != secexec.Failed {
		t.Fatalf("%+v", res)
	}
}

func TestPlainArgv(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"true", []string{"true"}},
		{"ls -la /tmp", []string{"ls", "-la", "/tmp"}},
		{`printf ''`, []string{"printf", ""}},
		{`echo "a b" 'c'`, []string{"echo", "a b", "c"}},
		{"echo hello | wc -c", nil},
		{"echo $HOME", nil},
		{"ls *.go", nil},
		{"FOO=1 env", nil},
		{"cd /tmp", nil},
		{"echo hi > f", nil},
		{"a && b", nil},
		{"echo `date`", nil},
		{"ls ~", nil},
		{"(", nil},
	} {
		got := secexec.PlainArgv(tc.in)
		if len(got) != len(tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%q: got %q want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: got %q want %q", tc.in, got, tc.want)
			}
		}
	}
}
