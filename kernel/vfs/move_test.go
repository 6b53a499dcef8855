package vfs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// policyVFS is a memfs VFS governed by p, with or without the move hook,
// holding /w/secret, /w/d/secret, /w/.git/config, /w/a/f and /w/link (a
// symlink to /w/secret).
func policyVFS(t *testing.T, p *policy.Policy, withMove bool) (*vfs.VFS, *vfs.Caller) {
	t.Helper()
	ctx := context.Background()
	c, err := policy.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	opts := vfs.Options{Authorize: func(_ context.Context, op vfs.Op, path string) error {
		return c.CheckFS(policy.FSOp(op), path)
	}}
	if withMove {
		opts.AuthorizeMove = func(_ context.Context, op vfs.Op, from, to string, tree bool) error {
			return c.CheckFSRelocate(policy.FSOp(op), from, to, tree)
		}
	}
	// Build the tree unchecked, then put the policy in front of it.
	setup, err := vfs.New(ctx, memfs.New(memfs.Options{}), vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := &vfs.Caller{Cwd: "/", Umask: 0o022}
	for _, d := range []string{"/w", "/w/d", "/w/.git", "/w/a"} {
		if err := setup.Mkdir(ctx, root, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"/w/secret", "/w/d/secret", "/w/.git/config", "/w/a/f"} {
		fd, err := setup.Open(ctx, root, f, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fd.Write(ctx, []byte("orig"))
		fd.DecRef()
	}
	if err := setup.Symlink(ctx, root, "/w/secret", "/w/link"); err != nil {
		t.Fatal(err)
	}
	rootFS := setup.Mounts()[0].FS
	v, err := vfs.New(ctx, rootFS, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v, root
}

// TestMoveKeepsDenials: a link or rename that would give a protected
// object a name with other rules is refused with EACCES, and the same
// call succeeds without the AuthorizeMove hook (the finding).
func TestMoveKeepsDenials(t *testing.T) {
	ctx := context.Background()
	readDeny := policy.DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{policy.FSRead}, "/w/secret", "/w/d/secret")
	gitDeny := policy.DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{policy.FSWrite}, "/w/.git/")
	attacks := []struct {
		name string
		p    *policy.Policy
		do   func(v *vfs.VFS, c *vfs.Caller) error
	}{
		{"ln secret", readDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Link(ctx, c, "/w/secret", "/w/x") }},
		{"mv secret", readDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Rename(ctx, c, "/w/secret", "/w/x") }},
		{"mv parent", readDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Rename(ctx, c, "/w/d", "/w/e") }},
		{"mv .git g", gitDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Rename(ctx, c, "/w/.git", "/w/g") }},
		{"mv a .git/a", gitDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Rename(ctx, c, "/w/a", "/w/.git/a") }},
		{"ln config", gitDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Link(ctx, c, "/w/.git/config", "/w/c") }},
		{"ln into .git", gitDeny, func(v *vfs.VFS, c *vfs.Caller) error { return v.Link(ctx, c, "/w/a/f", "/w/.git/f") }},
	}
	for _, a := range attacks {
		v, c := policyVFS(t, a.p, true)
		if err := a.do(v, c); !errors.Is(err, errno.EACCES) {
			t.Errorf("%s: err=%v, want EACCES", a.name, err)
		}
		v, c = policyVFS(t, a.p, false)
		if err := a.do(v, c); err != nil {
			t.Errorf("%s without the hook: %v (the attack should work there)", a.name, err)
		}
	}
}

type FSOp = policy.FSOp

// TestMoveLegit: moves within equally governed places keep working, and a
// symlink to a protected file protects it still (resolution checks the
// target's path).
func TestMoveLegit(t *testing.T) {
	ctx := context.Background()
	p := policy.DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{policy.FSRead}, "/w/secret", "/w/d/secret").
		DenyFS([]FSOp{policy.FSWrite}, "/w/.git/")
	v, c := policyVFS(t, p, true)
	for _, step := range []struct {
		name string
		err  error
	}{
		{"mv a b", v.Rename(ctx, c, "/w/a", "/w/b")},
		{"mv b/f b/g", v.Rename(ctx, c, "/w/b/f", "/w/b/g")},
		{"ln b/g h", v.Link(ctx, c, "/w/b/g", "/w/h")},
		{"mv link l2", v.Rename(ctx, c, "/w/link", "/w/l2")},
		{"mkdir .git/x", v.Mkdir(ctx, c, "/w/.git/x", 0o755)},
		{"mv .git/x .git/y", v.Rename(ctx, c, "/w/.git/x", "/w/.git/y")},
	} {
		if step.err != nil {
			t.Errorf("%s: %v", step.name, step.err)
		}
	}
	if _, err := v.Open(ctx, c, "/w/l2", vfs.O_RDONLY, 0); !errors.Is(err, errno.EACCES) {
		t.Errorf("read through a moved symlink: err=%v, want EACCES", err)
	}
	if err := v.Symlink(ctx, c, "/w/.git", "/w/s"); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Open(ctx, c, "/w/s/config", vfs.O_WRONLY, 0); !errors.Is(err, errno.EACCES) {
		t.Errorf("write through a symlink to .git: err=%v, want EACCES", err)
	}
}

// TestRenameOverNeedsRemove: replacing an existing file removes it, so a
// rename onto a path needs remove there.
func TestRenameOverNeedsRemove(t *testing.T) {
	ctx := context.Background()
	p := policy.DenyAll().AllowFS(nil, "/w/**").DenyFS([]FSOp{policy.FSRemove}, "/w/d/secret", "/w/secret")
	v, c := policyVFS(t, p, true)
	if err := v.Rename(ctx, c, "/w/d/secret", "/w/secret"); !errors.Is(err, errno.EACCES) {
		t.Errorf("rename over an undeletable file: err=%v, want EACCES", err)
	}
	if err := v.Rename(ctx, c, "/w/a/f", "/w/d/f"); err != nil {
		t.Errorf("rename to a new name: %v", err)
	}
}
