package hostfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// resolver names the two ways of resolving beneath the root, so that every
// security test runs against both.
type resolver struct {
	name  string
	noAt2 bool
}

var resolvers = []resolver{{"openat2", false}, {"walk", true}}

// forResolvers runs f once with openat2 and once with the fallback walk.
func forResolvers(t *testing.T, f func(t *testing.T, r resolver)) {
	t.Helper()
	for _, r := range resolvers {
		t.Run(r.name, func(t *testing.T) { f(t, r) })
	}
}

// newFS makes a filesystem over a fresh temporary directory, returned too.
func newFS(t testing.TB, opts Options, q quirks) (*FS, string) {
	t.Helper()
	dir := t.TempDir()
	return newFSAt(t, dir, opts, q), dir
}

func newFSAt(t testing.TB, dir string, opts Options, q quirks) *FS {
	t.Helper()
	fs, err := New(dir, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if !q.noOpenat2 && fs.q.noOpenat2 {
		t.Fatalf("this kernel lacks openat2; the openat2 path cannot be tested here")
	}
	// Keep what New detected unless the test forces a fallback.
	fs.q.noOpenat2 = fs.q.noOpenat2 || q.noOpenat2
	fs.q.noFchmodat2 = q.noFchmodat2
	fs.q.noRWFAppend = q.noRWFAppend
	fs.q.hashedReaddir = fs.q.hashedReaddir || q.hashedReaddir
	t.Cleanup(func() { _ = fs.Release() })
	return fs
}

func root(t testing.TB, fs *FS) vfs.Inode {
	t.Helper()
	r, err := fs.Root(context.Background())
	if err != nil {
		t.Fatalf("Root: %v", err)
	}
	return r
}

// walkTo looks up a slash-separated path from the root inode.
func walkTo(t testing.TB, fs *FS, names ...string) vfs.Inode {
	t.Helper()
	n := root(t, fs)
	for _, name := range names {
		c, err := n.Lookup(context.Background(), name)
		if err != nil {
			t.Fatalf("Lookup %q: %v", name, err)
		}
		n = c
	}
	return n
}

func wantErrno(t testing.TB, what string, err error, want ...errno.Errno) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got success, want %v", what, want)
	}
	var e errno.Errno
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v (%T) is not an errno", what, err, err)
	}
	for _, w := range want {
		if e == w {
			return
		}
	}
	t.Fatalf("%s: got %s, want one of %v", what, e.Name(), want)
}

func mustWriteFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// readAll opens n read-only and reads it whole.
func readAll(ctx context.Context, n vfs.Inode) ([]byte, error) {
	h, err := n.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		m, err := h.ReadAt(ctx, buf, int64(len(out)))
		if err != nil {
			return out, err
		}
		if m == 0 {
			return out, nil
		}
		out = append(out, buf[:m]...)
	}
}

// listAll reads a directory to the end in batches of max.
func listAll(t testing.TB, n vfs.Inode, max int) []vfs.Dirent {
	t.Helper()
	var out []vfs.Dirent
	var cookie uint64
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("ReadDir does not terminate")
		}
		ents, err := n.ReadDir(context.Background(), cookie, max)
		if err != nil {
			t.Fatalf("ReadDir: %v", err)
		}
		if len(ents) == 0 {
			return out
		}
		if len(ents) > max {
			t.Fatalf("ReadDir returned %d > max %d entries", len(ents), max)
		}
		out = append(out, ents...)
		cookie = ents[len(ents)-1].Next
	}
}

// hostSnapshot records every file beneath dir with its content, for
// asserting that nothing outside a root changed.
func hostSnapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		key := p + "|" + info.Mode().String() + "|" + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[key] = string(b)
		} else {
			out[key] = ""
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
