package procfs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/devfs"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// vm assembles what the kernel will: a memory root with /dev and /proc
// mounted, and the fake process table. Process 42 (uid 1000) has a pipe on
// fd 0 and /tmp/out.txt, opened through the VFS, on fd 1.
type vm struct {
	v    *vfs.VFS
	k    *fakeKernel
	out  vfs.File
	pipe *pathless
	sh   *vfs.Caller
}

func newVM(t *testing.T) *vm {
	t.Helper()
	ctx := context.Background()
	v, err := vfs.New(ctx, memfs.New(memfs.Options{}), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/dev", "/proc", "/tmp"} {
		if err := v.Mkdir(ctx, vfs.Root, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.SetAttr(ctx, vfs.Root, "/tmp", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o1777}); err != nil {
		t.Fatal(err)
	}
	k := newFake()
	if err := v.Mount(ctx, vfs.Root, "/dev", devfs.New(devfs.Options{}), vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := v.Mount(ctx, vfs.Root, "/proc", New(k), vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	sh := &vfs.Caller{UID: 1000, GID: 100, Cwd: "/", Umask: 0o022}
	out, err := v.Open(as(42), sh, "/tmp/out.txt", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pipe := newPathless("pipe:[7]", vfs.O_RDONLY)
	k.procs[42].setFD(0, pipe)
	k.procs[42].setFD(1, out)
	t.Cleanup(out.DecRef)
	return &vm{v: v, k: k, out: out, pipe: pipe, sh: sh}
}

func readFile(t *testing.T, ctx context.Context, v *vfs.VFS, c *vfs.Caller, path string) string {
	t.Helper()
	f, err := v.Open(ctx, c, path, vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.DecRef()
	var out []byte
	buf := make([]byte, 100)
	for {
		n, err := f.Read(ctx, buf)
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		if n == 0 {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

// /dev/stdout leads through /proc/self/fd/1 to the file on the caller's
// fd 1, and writing to it lands in that file.
func TestVFSStdioLinks(t *testing.T) {
	m := newVM(t)
	ctx := as(42)
	if p, err := m.v.Realpath(ctx, m.sh, "/dev/stdout"); err != nil || p != "/tmp/out.txt" {
		t.Errorf("realpath /dev/stdout = %q, %v", p, err)
	}
	f, err := m.v.Open(ctx, m.sh, "/dev/stdout", vfs.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != "/tmp/out.txt" {
		t.Errorf("opened %q", f.Path())
	}
	if _, err := f.Write(ctx, []byte("hello via /dev/stdout\n")); err != nil {
		t.Fatal(err)
	}
	f.DecRef()
	if got := readFile(t, ctx, m.v, m.sh, "/tmp/out.txt"); got != "hello via /dev/stdout\n" {
		t.Errorf("out.txt = %q", got)
	}
	links := map[string]string{
		"/dev/stdout":      "/proc/self/fd/1",
		"/dev/fd":          "/proc/self/fd",
		"/proc/self":       "42",
		"/proc/self/fd/1":  "/tmp/out.txt",
		"/dev/fd/0":        "pipe:[7]",
		"/proc/42/cwd":     "/home/guest",
		"/proc/self/root":  "/",
		"/proc/self/exe":   "/bin/sh",
		"/dev/fd/../../42": "", // not a link: EINVAL
	}
	for path, want := range links {
		got, err := m.v.Readlink(ctx, m.sh, path)
		if want == "" {
			if !errors.Is(err, errno.EINVAL) {
				t.Errorf("readlink %s: %q, %v; want EINVAL", path, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("readlink %s = %q, %v; want %q", path, got, err, want)
		}
	}
	// Another process sees its own fds through the same paths.
	if _, err := m.v.Realpath(as(1), vfs.Root, "/dev/stdout"); !errors.Is(err, errno.ENOENT) {
		t.Errorf("init has no fd 1, realpath gave %v", err)
	}
	// A call without a process has no /proc/self.
	if _, err := m.v.Stat(context.Background(), vfs.Root, "/dev/stdout"); !errors.Is(err, errno.ENOENT) {
		t.Errorf("host-side stat /dev/stdout: %v", err)
	}
}

// An fd without a path (a pipe) is shared by opening its link, in the
// direction it was opened in.
func TestVFSPipeLink(t *testing.T) {
	m := newVM(t)
	ctx := as(42)
	f, err := m.v.Open(ctx, m.sh, "/dev/stdin", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f != vfs.File(m.pipe) || m.pipe.ReadRefs() != 2 {
		t.Errorf("opened %v with %d refs, want the pipe with 2", f, m.pipe.ReadRefs())
	}
	f.DecRef()
	_, err = m.v.Open(ctx, m.sh, "/proc/self/fd/0", vfs.O_WRONLY, 0)
	if !errors.Is(err, errno.EACCES) {
		t.Errorf("writing a read end: %v", err)
	}
	if st, err := m.v.Stat(ctx, m.sh, "/dev/stdin"); err != nil || st.Type() != vfs.TypeFIFO {
		t.Errorf("stat /dev/stdin = %+v, %v", st, err)
	}
	if st, err := m.v.Lstat(ctx, m.sh, "/proc/self/fd/0"); err != nil || st.Mode != vfs.S_IFLNK|0o500 {
		t.Errorf("lstat fd/0 = %+v, %v", st, err)
	}
}

func TestVFSProcFiles(t *testing.T) {
	m := newVM(t)
	ctx := as(42)
	status := readFile(t, ctx, m.v, m.sh, "/proc/self/status")
	if !strings.Contains(status, "\nPid:\t42\n") || !strings.Contains(status, "\nUid:\t1000\t") {
		t.Errorf("status via /proc/self: %q", status)
	}
	// Working directory inside /proc/self.
	in := &vfs.Caller{UID: 1000, GID: 100, Cwd: "/proc/self"}
	if got := readFile(t, ctx, m.v, in, "comm"); got != "sh\n" {
		t.Errorf("comm relative to /proc/self: %q", got)
	}
	dir, err := m.v.Open(ctx, m.sh, "/proc", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := dir.ReadDir(ctx, 100)
	dir.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	got := names(ents)
	for _, want := range []string{".", "..", "self", "1", "42", "meminfo", "sys"} {
		if !slices.Contains(got, want) {
			t.Errorf("readdir /proc = %v, missing %s", got, want)
		}
	}
	for _, c := range []*vfs.Caller{m.sh, vfs.Root} {
		_, err := m.v.Open(ctx, c, "/proc/meminfo", vfs.O_WRONLY, 0)
		if !errors.Is(err, errno.EACCES) {
			t.Errorf("uid %d opening meminfo for writing: %v", c.UID, err)
		}
	}
	if err := m.v.Mkdir(ctx, vfs.Root, "/proc/x", 0o755); !errors.Is(err, errno.EPERM) {
		t.Errorf("mkdir in /proc: %v", err)
	}
	if _, err := m.v.Open(ctx, vfs.Root, "/proc/x", vfs.O_WRONLY|vfs.O_CREAT, 0o644); !errors.Is(err, errno.EPERM) {
		t.Errorf("create in /proc: %v", err)
	}
	if err := m.v.Unlink(ctx, vfs.Root, "/proc/meminfo"); !errors.Is(err, errno.EPERM) {
		t.Errorf("unlink in /proc: %v", err)
	}
	// Another uid may not follow or read 42's private entries.
	other := &vfs.Caller{UID: 2000, GID: 2000, Cwd: "/"}
	m.k.add(&fakeProc{status: Status{PID: 61, UID: 2000, GID: 2000}, cwd: "/", fds: map[int]vfs.File{}})
	for _, p := range []string{"/proc/42/cwd/", "/proc/42/environ", "/proc/42/fd/1"} {
		if _, err := m.v.Open(as(61), other, p, vfs.O_RDONLY, 0); !errors.Is(err, errno.EACCES) {
			t.Errorf("uid 2000 opening %s: %v", p, err)
		}
	}
	if got := readFile(t, as(61), m.v, other, "/proc/42/status"); !strings.Contains(got, "Pid:\t42") {
		t.Errorf("status of another uid: %q", got)
	}
	// Process exit removes the directory.
	m.k.remove(42)
	if _, err := m.v.Stat(as(1), vfs.Root, "/proc/42"); !errors.Is(err, errno.ENOENT) {
		t.Errorf("stat of exited process: %v", err)
	}
	if _, err := m.v.Open(ctx, m.sh, "/dev/stdout", vfs.O_WRONLY, 0); !errors.Is(err, errno.ENOENT) {
		t.Errorf("/dev/stdout of an exited caller: %v", err)
	}
}

func TestVFSDevices(t *testing.T) {
	m := newVM(t)
	ctx := as(42)
	// A shell's "> /dev/null" opens with O_CREAT|O_TRUNC.
	f, err := m.v.Open(ctx, m.sh, "/dev/null", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write(ctx, []byte("discard")); n != 7 || err != nil {
		t.Errorf("write /dev/null: %d, %v", n, err)
	}
	if _, err := f.Pwrite(ctx, []byte("x"), 0); !errors.Is(err, errno.ESPIPE) {
		t.Errorf("pwrite /dev/null: %v", err)
	}
	f.DecRef()
	z, err := m.v.Open(ctx, m.sh, "/dev/zero", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("xxxx")
	if n, err := z.Read(ctx, buf); n != 4 || err != nil || string(buf) != "\x00\x00\x00\x00" {
		t.Errorf("read /dev/zero: %q %d %v", buf, n, err)
	}
	z.DecRef()
	full, err := m.v.Open(ctx, m.sh, "/dev/full", vfs.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := full.Write(ctx, []byte("x")); !errors.Is(err, errno.ENOSPC) {
		t.Errorf("write /dev/full: %v", err)
	}
	full.DecRef()
	if _, err := m.v.Open(ctx, m.sh, "/dev/tty", vfs.O_RDWR, 0); !errors.Is(err, errno.ENXIO) {
		t.Errorf("open /dev/tty: %v", err)
	}
	if err := m.v.Mkdir(ctx, vfs.Root, "/dev/x", 0o755); !errors.Is(err, errno.EPERM) {
		t.Errorf("mkdir in /dev: %v", err)
	}
	if err := m.v.Unlink(ctx, vfs.Root, "/dev/null"); !errors.Is(err, errno.EPERM) {
		t.Errorf("rm /dev/null: %v", err)
	}
	if err := m.v.SetAttr(ctx, vfs.Root, "/dev/null", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}); !errors.Is(err, errno.EPERM) {
		t.Errorf("chmod /dev/null: %v", err)
	}
	if st, err := m.v.Stat(ctx, m.sh, "/dev/urandom"); err != nil || st.Rdev != devfs.DevURandom || st.Dev == 0 {
		t.Errorf("stat /dev/urandom: %+v %v", st, err)
	}
}
