package vfs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// newTree builds a VFS over a memfs root with a small tree, and a second
// memfs mounted at /mnt.
func newTree(t testing.TB, auth vfs.Authorizer) *vfs.VFS {
	t.Helper()
	ctx := context.Background()
	v, err := vfs.New(ctx, memfs.New(memfs.Options{}), vfs.Options{Authorize: auth})
	if err != nil {
		t.Fatal(err)
	}
	c := &vfs.Caller{Cwd: "/"}
	for _, d := range []string{"/etc", "/home", "/home/u", "/mnt", "/secret", "/a", "/a/b"} {
		if err := v.Mkdir(ctx, c, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Mount(ctx, c, "/mnt", memfs.New(memfs.Options{}), vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{"/etc/passwd": "root", "/secret/key": "k", "/home/u/f": "f", "/mnt/m": "m"} {
		f, err := v.Open(ctx, c, p, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(ctx, []byte(data))
		f.DecRef()
	}
	links := map[string]string{
		"/home/u/up":      "../../..",
		"/home/u/abs":     "/etc",
		"/home/u/tosec":   "/secret/key",
		"/home/u/dang":    "/nowhere/x",
		"/home/u/loop1":   "loop2",
		"/home/u/loop2":   "loop1",
		"/home/u/self":    "self",
		"/home/u/mntup":   "/mnt/../etc",
		"/home/u/dotdots": "../../../../../../../../etc/passwd",
	}
	for l, target := range links {
		if err := v.Symlink(ctx, c, target, l); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func readAll(t *testing.T, v *vfs.VFS, c *vfs.Caller, p string) (string, error) {
	t.Helper()
	ctx := context.Background()
	f, err := v.Open(ctx, c, p, vfs.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.DecRef()
	buf := make([]byte, 64)
	n, err := f.Read(ctx, buf)
	return string(buf[:n]), err
}

func TestResolutionStaysInside(t *testing.T) {
	v := newTree(t, nil)
	ctx := context.Background()
	c := &vfs.Caller{Cwd: "/home/u"}
	for _, tc := range []struct {
		path string
		real string
		err  errno.Errno
	}{
		{"/", "/", 0},
		{"/..", "/", 0},
		{"/../../..", "/", 0},
		{"/../../etc/passwd", "/etc/passwd", 0},
		{"../../../../etc", "/etc", 0},
		{"up", "/", 0},
		{"up/etc/passwd", "/etc/passwd", 0},
		{"dotdots", "/etc/passwd", 0},
		{"abs/passwd", "/etc/passwd", 0},
		{"mntup", "/etc", 0},
		{"/mnt/..", "/", 0},
		{"/mnt/../mnt/m", "/mnt/m", 0},
		{"/a/b/../../etc", "/etc", 0},
		{"/a/./b/.", "/a/b", 0},
		{"//a//b//", "/a/b", 0},
		{"dang", "", errno.ENOENT},
		{"loop1", "", errno.ELOOP},
		{"self", "", errno.ELOOP},
		{"/etc/passwd/", "", errno.ENOTDIR},
		{"/etc/passwd/..", "", errno.ENOTDIR},
		{"/etc/passwd/x", "", errno.ENOTDIR},
		{"/nope/..", "", errno.ENOENT},
		{"", "", errno.ENOENT},
		{"/etc\x00/passwd", "", errno.EINVAL},
		{"/" + strings.Repeat("x", 256), "", errno.ENAMETOOLONG},
		{"/" + strings.Repeat("a/", 2048), "", errno.ENAMETOOLONG},
	} {
		real, err := v.Realpath(ctx, c, tc.path)
		if tc.err != 0 {
			if !errors.Is(err, tc.err) {
				t.Errorf("%q: err %v, want %v", tc.path, err, tc.err)
			}
			continue
		}
		if err != nil || real != tc.real {
			t.Errorf("%q: %q, %v; want %q", tc.path, real, err, tc.real)
		}
	}
}

func TestSymlinkHopLimit(t *testing.T) {
	v := newTree(t, nil)
	ctx := context.Background()
	c := &vfs.Caller{Cwd: "/"}
	// A chain of 40 links resolves; 41 does not.
	for i := 0; i < 41; i++ {
		target := "/etc/passwd"
		if i > 0 {
			target = "/a/l" + itoa(i-1)
		}
		if err := v.Symlink(ctx, c, target, "/a/l"+itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := readAll(t, v, c, "/a/l39"); err != nil || got != "root" {
		t.Fatalf("40 hops: %q %v", got, err)
	}
	if _, err := readAll(t, v, c, "/a/l40"); !errors.Is(err, errno.ELOOP) {
		t.Fatalf("41 hops: %v", err)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// Permission rules apply to the resolved path: a symlink in an allowed
// directory cannot launder a denied target, and link checks both ends.
func TestPolicyOnResolvedPaths(t *testing.T) {
	p := policy.DenyAll().AllowFS(policy.AllFSOps(), "/home/**", "/etc/**").DenyFS(policy.AllFSOps(), "/etc/passwd").
		AllowFS([]policy.FSOp{policy.FSMount}, "/mnt")
	checker, err := policy.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var denied []string
	checker = checker.WithAudit(func(e policy.Event) {
		mu.Lock()
		denied = append(denied, e.Op+" "+e.Target)
		mu.Unlock()
	}, policy.AuditDenials)
	auth := func(ctx context.Context, op vfs.Op, path string) error {
		return checker.CheckFS(policy.FSOp(op), path)
	}
	v := newTree(t, nil)
	guarded := newTreeWithAuth(t, v, auth)
	ctx := context.Background()
	c := &vfs.Caller{Cwd: "/home/u"}
	if got, err := readAll(t, guarded, c, "f"); err != nil || got != "f" {
		t.Fatalf("allowed read: %q %v", got, err)
	}
	for _, p := range []string{"tosec", "/secret/key", "dotdots", "abs/passwd", "up/etc/passwd"} {
		_, err := readAll(t, guarded, c, p)
		var de *policy.DeniedError
		if !errors.Is(err, errno.EACCES) || !errors.As(err, &de) {
			t.Errorf("%s: %v, want a policy denial", p, err)
		}
	}
	// Hard link into an allowed place from a denied file: both ends count.
	if err := guarded.Link(ctx, c, "/etc/passwd", "/home/u/pw"); !errors.Is(err, errno.EACCES) {
		t.Errorf("link from denied file: %v", err)
	}
	if err := guarded.Rename(ctx, c, "/home/u/f", "/secret/f"); !errors.Is(err, errno.EACCES) {
		t.Errorf("rename into denied dir: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(denied) < 5 || !strings.Contains(strings.Join(denied, ","), "read /secret/key") {
		t.Errorf("audit events: %v", denied)
	}
}

// newTreeWithAuth returns a VFS sharing v's root filesystem but checking
// auth; mounts are recreated.
func newTreeWithAuth(t *testing.T, v *vfs.VFS, auth vfs.Authorizer) *vfs.VFS {
	t.Helper()
	ctx := context.Background()
	ms := v.Mounts()
	g, err := vfs.New(ctx, ms[0].FS, vfs.Options{Authorize: auth})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[1:] {
		if err := g.Mount(ctx, vfs.Root, m.Path, m.FS, vfs.MountOptions{ReadOnly: m.ReadOnly}); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestDACForNonRoot(t *testing.T) {
	v := newTree(t, nil)
	ctx := context.Background()
	root := &vfs.Caller{Cwd: "/"}
	if err := v.SetAttr(ctx, root, "/secret", false, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}); err != nil {
		t.Fatal(err)
	}
	user := &vfs.Caller{UID: 1000, GID: 1000, Cwd: "/", Umask: 0o022}
	if _, err := readAll(t, v, user, "/secret/key"); !errors.Is(err, errno.EACCES) {
		t.Fatalf("search without x: %v", err)
	}
	if err := v.Mkdir(ctx, user, "/etc/x", 0o755); !errors.Is(err, errno.EACCES) {
		t.Fatalf("mkdir in root-owned dir: %v", err)
	}
	if err := v.SetAttr(ctx, user, "/etc/passwd", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}); !errors.Is(err, errno.EPERM) {
		t.Fatalf("chmod of someone else's file: %v", err)
	}
	// Sticky directory: a user cannot remove another user's file.
	if err := v.Mkdir(ctx, root, "/tmp", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := v.SetAttr(ctx, root, "/tmp", false, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o1777}); err != nil {
		t.Fatal(err)
	}
	other := &vfs.Caller{UID: 1001, GID: 1001, Cwd: "/", Umask: 0o022}
	f, err := v.Open(ctx, other, "/tmp/theirs", vfs.O_CREAT|vfs.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.DecRef()
	if err := v.Unlink(ctx, user, "/tmp/theirs"); !errors.Is(err, errno.EPERM) {
		t.Fatalf("sticky unlink: %v", err)
	}
	st, err := v.Stat(ctx, user, "/tmp/theirs")
	if err != nil || st.Mode&0o777 != 0o644 || st.UID != 1001 {
		t.Fatalf("umask/owner: %o %d %v", st.Mode&0o777, st.UID, err)
	}
}

func TestMountTable(t *testing.T) {
	v := newTree(t, nil)
	ctx := context.Background()
	c := &vfs.Caller{Cwd: "/"}
	if err := v.Mount(ctx, c, "/mnt", memfs.New(memfs.Options{}), vfs.MountOptions{}); !errors.Is(err, errno.EBUSY) {
		t.Fatalf("double mount: %v", err)
	}
	if err := v.Rmdir(ctx, c, "/mnt"); !errors.Is(err, errno.EBUSY) {
		t.Fatalf("rmdir of a mount point: %v", err)
	}
	if err := v.Rename(ctx, c, "/mnt/m", "/a/m"); !errors.Is(err, errno.EXDEV) {
		t.Fatalf("rename across mounts: %v", err)
	}
	if err := v.Link(ctx, c, "/mnt/m", "/a/m"); !errors.Is(err, errno.EXDEV) {
		t.Fatalf("link across mounts: %v", err)
	}
	if err := v.Mount(ctx, c, "/a/b", memfs.New(memfs.Options{ReadOnly: true}), vfs.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := v.Unmount(ctx, c, "/a"); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("unmount of a non-mount: %v", err)
	}
	if err := v.Mkdir(ctx, c, "/a/b/x", 0o755); !errors.Is(err, errno.EROFS) {
		t.Fatalf("mkdir on read-only: %v", err)
	}
	if err := v.Unmount(ctx, c, "/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := v.Mkdir(ctx, c, "/a/b/x", 0o755); err != nil {
		t.Fatalf("after unmount: %v", err)
	}
	user := &vfs.Caller{UID: 1000, Cwd: "/"}
	if err := v.Mount(ctx, user, "/a", memfs.New(memfs.Options{}), vfs.MountOptions{}); !errors.Is(err, errno.EPERM) {
		t.Fatalf("mount by non-root: %v", err)
	}
}

// FuzzResolve walks arbitrary paths through a tree full of hostile links:
// it must never panic, and whatever resolves must be a canonical absolute
// path inside the tree.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/", "..", "../../..", "up/etc", "dotdots", "loop1", "//a//b/../", "/etc/passwd/",
		"a\x00b", "/mnt/../../..", strings.Repeat("../", 100), "abs/../abs/./passwd", "/proc/self"} {
		f.Add(s, "/home/u")
	}
	v := newTree(f, nil)
	f.Fuzz(func(t *testing.T, p, cwd string) {
		if !strings.HasPrefix(cwd, "/") {
			cwd = "/" + cwd
		}
		ctx := context.Background()
		c := &vfs.Caller{Cwd: cwd}
		real, err := v.Realpath(ctx, c, p)
		if err != nil {
			if errno.Of(err) == errno.EIO {
				t.Fatalf("%q: untyped error %v", p, err)
			}
			return
		}
		if !strings.HasPrefix(real, "/") || strings.Contains(real, "//") || strings.Contains(real+"/", "/../") ||
			strings.Contains(real+"/", "/./") || (len(real) > 1 && strings.HasSuffix(real, "/")) {
			t.Fatalf("%q resolved to non-canonical %q", p, real)
		}
		if _, err := v.Lstat(ctx, &vfs.Caller{Cwd: "/"}, real); err != nil {
			t.Fatalf("%q resolved to %q, which does not exist: %v", p, real, err)
		}
	})
}

// A caller with an Owner keeps its own rights (root's here) but what it
// creates (files, directories, symlinks) belongs to the Owner at once.
func TestCallerOwner(t *testing.T) {
	v := newTree(t, nil)
	ctx := context.Background()
	host := &vfs.Caller{Cwd: "/", Umask: 0o022, Owner: &vfs.Owner{UID: 1000, GID: 1001}}
	if err := v.SetAttr(ctx, &vfs.Caller{Cwd: "/"}, "/secret", false, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}); err != nil {
		t.Fatal(err)
	}
	f, err := v.Open(ctx, host, "/secret/new", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
	if err != nil {
		t.Fatalf("root's rights: %v", err)
	}
	f.DecRef()
	if err := v.Mkdir(ctx, host, "/secret/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := v.Symlink(ctx, host, "new", "/secret/link"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/secret/new", "/secret/dir", "/secret/link"} {
		st, err := v.Lstat(ctx, host, p)
		if err != nil || st.UID != 1000 || st.GID != 1001 {
			t.Errorf("%s: uid %d gid %d %v", p, st.UID, st.GID, err)
		}
	}
	// An existing file keeps its owner when opened with O_CREAT.
	f, err = v.Open(ctx, host, "/etc/passwd", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.DecRef()
	if st, err := v.Stat(ctx, host, "/etc/passwd"); err != nil || st.UID != 0 {
		t.Errorf("/etc/passwd: uid %d %v", st.UID, err)
	}
}
