// Package vfstest is the conformance suite every secexec filesystem backend
// runs: it mounts the backend in a fresh vfs.VFS and checks POSIX
// semantics through the VFS API, the way a guest would see them (files,
// directories, symlinks, hard links, modes, ownership, times, rename,
// open flags, errnos, permission checks and escape attempts).
//
// A backend's test calls Run with a factory of fresh, empty filesystems:
//
//	func TestConformance(t *testing.T) {
//		vfstest.Run(t, func(t *testing.T) vfs.FileSystem { return memfs.New(memfs.Options{}) })
//	}
//
// Every check runs twice: with the backend as the VFS root, and mounted at
// /mnt of a memory filesystem root (so "..", absolute symlinks and EXDEV
// cross a real mount boundary). Each check is a subtest of its own, so a
// failure names exactly what broke.
//
// Timestamps are compared with the wall clock: a backend must stamp times
// from a clock that advances (checks wait for it to move on before an
// update whose new time they compare).
package vfstest

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// Factory returns a fresh, empty filesystem for one check. It may use
// t.TempDir and t.Cleanup for whatever the backend needs.
type Factory func(t *testing.T) vfs.FileSystem

// Run runs the whole suite against the filesystems newFS makes. If the
// backend can be constructed read-only, pass that constructor as the
// single optional newReadOnlyFS; its filesystems may be empty or hold any
// content, and the suite checks that every mutation fails with EROFS while
// reads keep working.
func Run(t *testing.T, newFS Factory, newReadOnlyFS ...Factory) {
	if len(newReadOnlyFS) > 1 {
		t.Fatal("vfstest.Run: at most one read-only factory")
	}
	for _, variant := range []string{"root", "mnt"} {
		t.Run(variant, func(t *testing.T) {
			for _, g := range groups {
				t.Run(g.name, func(t *testing.T) {
					for _, c := range g.checks {
						t.Run(c.name, func(t *testing.T) {
							c.fn(t, newEnv(t, newFS, variant))
						})
					}
				})
			}
			if len(newReadOnlyFS) == 1 && newReadOnlyFS[0] != nil {
				t.Run("readonly", func(t *testing.T) {
					for _, c := range readOnlyChecks {
						t.Run(c.name, func(t *testing.T) {
							c.fn(t, newEnv(t, newReadOnlyFS[0], variant))
						})
					}
				})
			}
		})
	}
}

// check is one named conformance check.
type check struct {
	name string
	fn   func(t *testing.T, e *env)
}

// group is a set of related checks.
type group struct {
	name   string
	checks []check
}

var groups = []group{
	{"files", fileChecks},
	{"openflags", openFlagChecks},
	{"dirs", dirChecks},
	{"symlinks", symlinkChecks},
	{"links", linkChecks},
	{"attrs", attrChecks},
	{"rename", renameChecks},
	{"errnos", errnoChecks},
	{"perms", permChecks},
	{"mounts", mountChecks},
	{"escape", escapeChecks},
}

// env is one check's world: a VFS with the backend mounted at base.
type env struct {
	t     *testing.T
	ctx   context.Context
	v     *vfs.VFS
	fs    vfs.FileSystem
	base  string // "" when the backend is the root, else its mount point
	newFS Factory
	root  *vfs.Caller
	user  *vfs.Caller // uid/gid 1000, for permission checks
}

func newEnv(t *testing.T, newFS Factory, variant string) *env {
	t.Helper()
	ctx := context.Background()
	fs := newFS(t)
	e := &env{t: t, ctx: ctx, fs: fs, newFS: newFS}
	var err error
	if variant == "root" {
		e.v, err = vfs.New(ctx, fs, vfs.Options{})
		if err != nil {
			t.Fatalf("vfs.New: %v", err)
		}
	} else {
		top := memfs.New(memfs.Options{})
		e.v, err = vfs.New(ctx, top, vfs.Options{})
		if err != nil {
			t.Fatalf("vfs.New: %v", err)
		}
		if err := e.v.Mkdir(ctx, vfs.Root, "/mnt", 0o755); err != nil {
			t.Fatalf("mkdir /mnt: %v", err)
		}
		if err := e.v.Mount(ctx, vfs.Root, "/mnt", fs, vfs.MountOptions{}); err != nil {
			t.Fatalf("mount /mnt: %v", err)
		}
		e.base = "/mnt"
	}
	e.root = &vfs.Caller{UID: 0, GID: 0, Cwd: e.p("/"), Umask: 0o022}
	e.user = &vfs.Caller{UID: 1000, GID: 1000, Cwd: e.p("/"), Umask: 0o022}
	return e
}

// p maps a path inside the backend to a VFS path.
func (e *env) p(path string) string {
	if e.base == "" {
		return path
	}
	if path == "/" {
		return e.base
	}
	return e.base + path
}

// wantErrno fails unless err carries the errno want (0 means success).
func wantErrno(t *testing.T, what string, err error, want errno.Errno) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Fatalf("%s: unexpected error: %v", what, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s: succeeded, want %s", what, want.Name())
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v (%s), want %s", what, err, errno.Of(err).Name(), want.Name())
	}
}

// open opens a backend path as c.
func (e *env) open(c *vfs.Caller, path string, flags vfs.OpenFlags, mode uint32) (vfs.File, error) {
	return e.v.Open(e.ctx, c, e.p(path), flags, mode)
}

// mustOpen opens a backend path as root and closes it when the check ends.
func (e *env) mustOpen(path string, flags vfs.OpenFlags, mode uint32) vfs.File {
	e.t.Helper()
	f, err := e.open(e.root, path, flags, mode)
	if err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
	e.t.Cleanup(f.DecRef)
	return f
}

// write creates (or truncates) path as root and writes data to it.
func (e *env) write(path string, data string) {
	e.t.Helper()
	f, err := e.open(e.root, path, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o644)
	if err != nil {
		e.t.Fatalf("create %s: %v", path, err)
	}
	defer f.DecRef()
	if n, err := f.Write(e.ctx, []byte(data)); n != len(data) || err != nil {
		e.t.Fatalf("write %s: %d, %v", path, n, err)
	}
}

// readFile reads the whole of path as c.
func (e *env) readFile(c *vfs.Caller, path string) (string, error) {
	f, err := e.open(c, path, vfs.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.DecRef()
	return readAll(e.ctx, f)
}

func readAll(ctx context.Context, f vfs.File) (string, error) {
	var sb strings.Builder
	buf := make([]byte, 1000)
	for {
		n, err := f.Read(ctx, buf)
		sb.Write(buf[:n])
		if err != nil && !errors.Is(err, io.EOF) {
			return sb.String(), err
		}
		if n == 0 {
			return sb.String(), nil
		}
	}
}

// read reads path as root and fails the check on error.
func (e *env) read(path string) string {
	e.t.Helper()
	s, err := e.readFile(e.root, path)
	if err != nil {
		e.t.Fatalf("read %s: %v", path, err)
	}
	return s
}

func (e *env) mkdir(path string, mode uint32) {
	e.t.Helper()
	if err := e.v.Mkdir(e.ctx, e.root, e.p(path), mode); err != nil {
		e.t.Fatalf("mkdir %s: %v", path, err)
	}
}

func (e *env) symlink(target, path string) {
	e.t.Helper()
	if err := e.v.Symlink(e.ctx, e.root, target, e.p(path)); err != nil {
		e.t.Fatalf("symlink %s -> %s: %v", path, target, err)
	}
}

func (e *env) stat(path string) vfs.Stat {
	e.t.Helper()
	st, err := e.v.Stat(e.ctx, e.root, e.p(path))
	if err != nil {
		e.t.Fatalf("stat %s: %v", path, err)
	}
	return st
}

func (e *env) lstat(path string) vfs.Stat {
	e.t.Helper()
	st, err := e.v.Lstat(e.ctx, e.root, e.p(path))
	if err != nil {
		e.t.Fatalf("lstat %s: %v", path, err)
	}
	return st
}

func (e *env) setAttr(path string, attr vfs.SetAttr) {
	e.t.Helper()
	if err := e.v.SetAttr(e.ctx, e.root, e.p(path), true, attr); err != nil {
		e.t.Fatalf("setattr %s: %v", path, err)
	}
}

// chown gives path to uid/gid as root.
func (e *env) chown(path string, uid, gid uint32) {
	e.t.Helper()
	e.setAttr(path, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID, UID: uid, GID: gid})
}

func (e *env) chmod(path string, mode uint32) {
	e.t.Helper()
	e.setAttr(path, vfs.SetAttr{Mask: vfs.SetMode, Mode: mode})
}

// list reads the directory at path through an open file and returns the
// names, "." and ".." included, in the order read.
func (e *env) list(path string, batch int) []string {
	e.t.Helper()
	f := e.mustOpen(path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	var out []string
	for {
		ents, err := f.ReadDir(e.ctx, batch)
		if err != nil {
			e.t.Fatalf("readdir %s: %v", path, err)
		}
		if len(ents) == 0 {
			return out
		}
		for _, d := range ents {
			out = append(out, d.Name)
		}
		if len(out) > maxListing {
			e.t.Fatalf("readdir %s: more than %d entries; cookies do not advance?", path, maxListing)
		}
	}
}

// maxListing bounds a directory listing, so a backend whose cookies do not
// advance fails the check instead of hanging it.
const maxListing = 100_000

// sameFile reports whether two stats describe one inode.
func sameFile(a, b vfs.Stat) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// waitPast blocks until the wall clock is well past t, so an update made
// afterwards gets a later timestamp even from a coarse clock. It is not an
// assertion on timing: the check only compares timestamps.
func waitPast(t time.Time) {
	for time.Since(t) < 20*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
	}
}

// sorted returns a sorted copy.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
