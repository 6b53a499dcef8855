package hostfs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var linkOpts = vfs.CreateOptions{Mode: vfs.S_IFLNK | 0o777}

// Guest symlinks may not lead host tools outside the mount: absolute and
// escaping targets are EPERM, and moves that would make a link escape are
// EXDEV. The host directory holds none of the refused links afterwards.
func TestSymlinkRule(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{}, quirks{})
	rt := root(t, fs)
	d, err := rt.Mkdir(ctx, "d", vfs.CreateOptions{Mode: vfs.S_IFDIR | 0o755})
	if err != nil {
		t.Fatal(err)
	}
	e, err := d.Mkdir(ctx, "e", vfs.CreateOptions{Mode: vfs.S_IFDIR | 0o755})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir    vfs.Inode
		target string
		want   error
	}{
		{rt, "/etc/shadow", errno.EPERM},
		{rt, "../x", errno.EPERM},
		{rt, "d/../../x", errno.EPERM},
		{d, "e/../../x", errno.EPERM}, // ".." after a name: the host follows e first
		{d, "../../x", errno.EPERM},
		{rt, "d/e/f", nil},
		{d, "../d/e", nil},
		{e, "../../d", nil},
		{e, "./.././../x", nil},
	} {
		name := "l" + filepath.Base(tc.target)
		_, err := tc.dir.Symlink(ctx, name, tc.target, linkOpts)
		if err != tc.want {
			t.Errorf("symlink -> %q: %v, want %v", tc.target, err, tc.want)
		}
		if err != nil {
			_ = tc.dir.Unlink(ctx, name)
		}
	}
	// e/up -> ../../d is fine two levels deep; moved to the root it would
	// point above the mount.
	if _, err := e.Symlink(ctx, "up", "../../d", linkOpts); err != nil {
		t.Fatal(err)
	}
	if err := e.Rename(ctx, "up", rt, "up"); err != errno.EXDEV {
		t.Errorf("rename of an escaping link to the root: %v, want EXDEV", err)
	}
	if err := rt.Link(ctx, "up", walkTo(t, fs, "d", "e", "up")); err != errno.EXDEV {
		t.Errorf("hard link of it at the root: %v, want EXDEV", err)
	}
	if err := d.Rename(ctx, "e", rt, "e2"); err != errno.EXDEV {
		t.Errorf("rename of the directory holding it to the root: %v, want EXDEV", err)
	}
	if err := e.Rename(ctx, "up", e, "up2"); err != nil {
		t.Errorf("rename in place: %v", err)
	}
	// Everything the host sees stays inside.
	err = filepath.Walk(host, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			return err
		}
		target, _ := os.Readlink(p)
		abs := filepath.Join(filepath.Dir(p), target)
		if filepath.IsAbs(target) || (abs != host && !strings.HasPrefix(abs, host+"/")) {
			t.Errorf("host symlink %s -> %s leaves the mount", p, target)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The option restores the old behaviour.
	free, _ := newFS(t, Options{AllowExternalSymlinks: true}, quirks{})
	if _, err := root(t, free).Symlink(ctx, "abs", "/etc/shadow", linkOpts); err != nil {
		t.Errorf("AllowExternalSymlinks: %v", err)
	}
}

// The byte quota counts apparent size: a sparse file by truncate or by a
// write far out is refused with ENOSPC; space comes back on removal.
func TestQuota(t *testing.T) {
	ctx := context.Background()
	const max = 1 << 20
	fs, host := newFS(t, Options{MaxBytes: max}, quirks{})
	rt := root(t, fs)
	f, err := rt.Create(ctx, "f", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: 1 << 40}); err != errno.ENOSPC {
		t.Errorf("truncate to 1 TiB: %v, want ENOSPC", err)
	}
	h, err := f.Open(ctx, vfs.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt(ctx, []byte("x"), 1<<40-1); err != errno.ENOSPC {
		t.Errorf("write at 1 TiB: %v, want ENOSPC", err)
	}
	big := make([]byte, max+100)
	if n, err := h.WriteAt(ctx, big, 0); err != nil || n != max {
		t.Errorf("write past the quota: %d %v, want %d written", n, err, max)
	}
	if _, err := h.WriteAt(ctx, []byte("y"), max); err != errno.ENOSPC {
		t.Errorf("write when full: %v, want ENOSPC", err)
	}
	if n, _, err := h.Append(ctx, []byte("z")); err != errno.ENOSPC {
		t.Errorf("append when full: %d %v, want ENOSPC", n, err)
	}
	if _, err := h.WriteAt(ctx, []byte("over"), 10); err != nil {
		t.Errorf("overwrite inside the file when full: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(host, "f")); st.Size() != max {
		t.Errorf("host file is %d bytes, want %d", st.Size(), max)
	}
	sf, _ := fs.Statfs(ctx)
	if sf.Blocks != max/statfsBlock || sf.BlocksFree != 0 {
		t.Errorf("statfs when full: %+v", sf)
	}
	// Unlinked while open: the space returns when the handle closes.
	if err := rt.Unlink(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if fs.quota.usage() != max {
		t.Errorf("usage after unlink of an open file = %d, want %d", fs.quota.usage(), max)
	}
	_ = h.Close()
	if fs.quota.usage() != 0 {
		t.Errorf("usage after close = %d, want 0", fs.quota.usage())
	}
	g, err := rt.Create(ctx, "g", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: max / 2}); err != nil {
		t.Errorf("truncate within the quota after space returned: %v", err)
	}
}

// Statfs shows no host numbers.
func TestStatfsSynthetic(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []Options{{}, {ReadOnly: true}, {MaxBytes: 8 << 20}} {
		fs, host := newFS(t, opts, quirks{})
		var hs unix.Statfs_t
		if err := unix.Statfs(host, &hs); err != nil {
			t.Fatal(err)
		}
		sf, err := fs.Statfs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sf.Type != StatfsMagic || sf.Blocks == hs.Blocks || (sf.BlocksFree != 0 && sf.BlocksFree == hs.Bavail) || sf.Files == hs.Files {
			t.Errorf("%+v: statfs %+v shows the host's %+v", opts, sf, hs)
		}
	}
}

// The charge matches the host exactly under concurrent writers and
// truncates of one file, and making and removing names refunds what it
// charged (a directory that grew on the host refunds no more than it cost).
func TestQuotaAccountingExact(t *testing.T) {
	ctx := context.Background()
	fs, host := newFS(t, Options{MaxBytes: 64 << 20}, quirks{})
	rt := root(t, fs)
	f, err := rt.Create(ctx, "f", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := f.Open(ctx, vfs.O_RDWR)
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Close()
			buf := make([]byte, 4096)
			for j := range 200 {
				off := int64((i*7919 + j*104729) % (1 << 20))
				if j%50 == 49 {
					_ = f.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: off})
					continue
				}
				if _, err := h.WriteAt(ctx, buf, off); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st, err := os.Stat(filepath.Join(host, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fs.quota.usage(); got != st.Size() {
		t.Errorf("usage %d, file %d bytes", got, st.Size())
	}
	before := fs.quota.usage()
	d, err := rt.Mkdir(ctx, "d", vfs.CreateOptions{Mode: vfs.S_IFDIR | 0o755})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		name := "file-with-a-long-name-to-grow-the-directory-" + strconv.Itoa(i)
		if _, err := d.Create(ctx, name, vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644}); err != nil {
			t.Fatal(err)
		}
		if err := d.Unlink(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Symlink(ctx, "l", "target", linkOpts); err != nil {
		t.Fatal(err)
	}
	if err := d.Unlink(ctx, "l"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Rmdir(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if got := fs.quota.usage(); got != before {
		t.Errorf("usage after mkdir, files, symlink and removal: %d, want %d", got, before)
	}
}
