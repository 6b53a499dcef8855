package layerfs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/layerfs"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

func TestBuild(t *testing.T) {
	ctx := context.Background()
	fs, err := layerfs.Build(ctx, append(layerfs.Dirs("/usr", "/usr/bin"),
		layerfs.Entry{Path: "/usr/bin/prog", Mode: 0o755, Data: []byte("#!marker\n")},
		layerfs.Entry{Path: "/usr/bin/notes", Data: []byte("text")},
		layerfs.Entry{Path: "/usr/bin/alias", Link: "prog"}))
	if err != nil {
		t.Fatal(err)
	}
	v, err := vfs.New(ctx, fs, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &vfs.Caller{Cwd: "/"}
	for path, want := range map[string]uint32{
		"/usr/bin": vfs.S_IFDIR | 0o755, "/usr/bin/prog": vfs.S_IFREG | 0o755,
		"/usr/bin/notes": vfs.S_IFREG | 0o644, "/usr/bin/alias": vfs.S_IFLNK | 0o777,
	} {
		st, err := v.Lstat(ctx, c, path)
		if err != nil || st.Mode != want || !st.Mtime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: mode %#o mtime %v (%v), want %#o at the epoch", path, st.Mode, st.Mtime, err, want)
		}
	}
	f, err := v.Open(ctx, c, "/usr/bin/alias", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.DecRef()
	buf := make([]byte, 64)
	n, _ := f.Read(ctx, buf)
	if string(buf[:n]) != "#!marker\n" {
		t.Errorf("through the link: %q", buf[:n])
	}

	// A parent missing from the list is an error naming the entry.
	_, err = layerfs.Build(ctx, []layerfs.Entry{{Path: "/usr/bin/x"}})
	if !errors.Is(err, errno.ENOENT) {
		t.Errorf("entry without its parent: %v", err)
	}
}
