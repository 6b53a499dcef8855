package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

var bg = context.Background()

// tree is a small filesystem with every kind of entry.
func tree(t testing.TB, seed string) *memfs.FS {
	t.Helper()
	fs := memfs.New(memfs.Options{})
	v, err := vfs.New(bg, fs, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &vfs.Caller{Cwd: "/"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, data []byte, mode uint32) {
		f, err := v.Open(bg, c, p, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, mode)
		must(err)
		_, err = f.Write(bg, data)
		must(err)
		f.DecRef()
	}
	must(v.Mkdir(bg, c, "/a", 0o750))
	must(v.Mkdir(bg, c, "/a/b", 0o755))
	write("/a/b/big", bytes.Repeat([]byte("0123456789"+seed), 100000), 0o640)
	write("/a/same1", []byte("same content"), 0o644)
	write("/a/same2", []byte("same content"), 0o600)
	write("/empty", nil, 0o644)
	write("/a/.wh.gone", nil, 0o644)
	must(v.Symlink(bg, c, "b/big", "/a/link"))
	must(v.Link(bg, c, "/a/same1", "/hard"))
	must(v.SetAttr(bg, c, "/a/b/big", false, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID | vfs.SetMtime, UID: 1000, GID: 1000, Mtime: time.Unix(1234567, 890)}))
	must(v.SetAttr(bg, c, "/a", false, vfs.SetAttr{Mask: vfs.SetMtime, Mtime: time.Unix(7654321, 0)}))
	return fs
}

// dump lists a filesystem's entries with their attributes and a hash of
// their data, for comparing two trees.
func dump(t testing.TB, fs vfs.FileSystem) string {
	t.Helper()
	dir := t.TempDir()
	st, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Capture(bg, st, "", nil, []Source{{"/", fs}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range m.Layers[0].Entries {
		if vfs.TypeOf(e.Mode) == vfs.TypeDir && e.Path == "." {
			e.Mtime = 0 // the root's time is not restored by a fresh fs's creation order
		}
		fmt.Fprintf(&b, "%+v\n", e)
	}
	return b.String()
}

func TestRoundTrip(t *testing.T) {
	src := tree(t, "x")
	st, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Capture(bg, st, "base1", []byte(`{"k":1}`), []Source{{"/", src}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Files != 5 || m.Bytes != 1100000+24 {
		t.Fatalf("files %d bytes %d", m.Files, m.Bytes)
	}
	got, err := Load(bg, st, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Base != "base1" || string(got.Meta) != `{"k":1}` {
		t.Fatalf("manifest = %+v", got)
	}
	dst := memfs.New(memfs.Options{})
	if err := Restore(bg, st, got.Layer("/"), dst); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, src), dump(t, dst); a != b {
		t.Fatalf("restored tree differs:\n%s\nvs\n%s", a, b)
	}
	// Hard links stay links.
	r, _ := dst.Root(bg)
	h, _ := r.Lookup(bg, "hard")
	if s, _ := h.Stat(bg); s.Nlink != 2 {
		t.Fatalf("hard link nlink = %d", s.Nlink)
	}
}

// TestDedup: unchanged files are not stored again, and a changed file
// adds only its own blob.
func TestDedup(t *testing.T) {
	dir := t.TempDir()
	st, _ := OpenDir(dir)
	m1, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	if m1.Stored == 0 || m1.Stored > m1.Bytes/10 {
		t.Fatalf("first snapshot stored %d of %d bytes (not compressed?)", m1.Stored, m1.Bytes)
	}
	m2, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Stored != 0 {
		t.Fatalf("identical snapshot stored %d bytes", m2.Stored)
	}
	m3, _ := Capture(bg, st, "", nil, []Source{{"/", tree(t, "y")}})
	if m3.Stored == 0 || m3.Stored >= m1.Stored {
		t.Fatalf("changed snapshot stored %d (first %d)", m3.Stored, m1.Stored)
	}
	// A store of only small files counts what it stored too.
	small := memfs.New(memfs.Options{})
	r, _ := small.Root(bg)
	f, _ := r.Create(bg, "f", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
	h, _ := f.Open(bg, vfs.O_WRONLY)
	h.WriteAt(bg, bytes.Repeat([]byte("abc"), 1000), 0)
	h.Close()
	m4, err := Capture(bg, st, "", nil, []Source{{"/", small}})
	if err != nil || m4.Stored == 0 || m4.Stored > 100 {
		t.Fatalf("small file stored %d bytes: %v", m4.Stored, err)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "blobs", "*", "*"))
	if len(blobs) != 4 { // big x, big y, "same content", abc...
		t.Fatalf("%d blobs: %v", len(blobs), blobs)
	}
	ids, _ := st.List(bg)
	if len(ids) != 4 {
		t.Fatalf("ids = %v", ids)
	}
}

// TestCorruption: a changed blob or manifest is refused, never restored.
func TestCorruption(t *testing.T) {
	dir := t.TempDir()
	st, _ := OpenDir(dir)
	m, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	// The manifest: one byte changed.
	mp := filepath.Join(dir, "manifests", m.ID+".json")
	orig, _ := os.ReadFile(mp)
	bad := bytes.Replace(orig, []byte(`"version":1`), []byte(`"version":1 `), 1)
	os.WriteFile(mp, bad, 0o600)
	if _, err := Load(bg, st, m.ID); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("tampered manifest: %v", err)
	}
	os.WriteFile(mp, orig, 0o600)
	// A blob replaced by another valid gzip stream.
	var blob string
	for _, e := range m.Layers[0].Entries {
		if e.Size > 1000 {
			blob = e.Blob
		}
	}
	bp := filepath.Join(dir, "blobs", blob[:2], blob)
	data, _ := os.ReadFile(bp)
	data[len(data)/2] ^= 0xff
	os.WriteFile(bp, data, 0o600)
	err = Restore(bg, st, m.Layer("/"), memfs.New(memfs.Options{}))
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt blob: %v", err)
	}
	// A manifest that escapes its layer with "..".
	for _, p := range []string{"../x", "/abs", "a/../../b", "a//b"} {
		l := &Layer{Mount: "/", Entries: []Entry{{Path: ".", Mode: vfs.S_IFDIR | 0o755}, {Path: p, Mode: vfs.S_IFREG | 0o644}}}
		if err := Restore(bg, st, l, memfs.New(memfs.Options{})); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("path %q: %v", p, err)
		}
	}
	// Restore is bounded by the destination's quota.
	os.WriteFile(bp, orig[:0], 0o600)
	m2, _ := Capture(bg, st, "", nil, []Source{{"/", tree(t, "z")}})
	err = Restore(bg, st, m2.Layer("/"), memfs.New(memfs.Options{Quota: vfs.NewQuota(1<<20, 100)}))
	if errno.Of(err) != errno.ENOSPC {
		t.Fatalf("restore over quota: %v", err)
	}
}

// TestDeleteCollects: deleting a snapshot removes only blobs no other
// snapshot needs (once they are older than the grace period).
func TestDeleteCollects(t *testing.T) {
	dir := t.TempDir()
	st, _ := OpenDir(dir)
	m1, _ := Capture(bg, st, "", nil, []Source{{"/", tree(t, "x")}})
	m2, _ := Capture(bg, st, "", nil, []Source{{"/", tree(t, "y")}})
	old := time.Now().Add(-2 * GCGrace)
	filepath.Walk(filepath.Join(dir, "blobs"), func(p string, _ os.FileInfo, _ error) error {
		return os.Chtimes(p, old, old)
	})
	if err := st.Delete(bg, m1.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(bg, m1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "blobs", "*", "*"))
	if len(blobs) != 2 {
		t.Fatalf("%d blobs left, want 2", len(blobs))
	}
	if err := Restore(bg, st, m2.Layer("/"), memfs.New(memfs.Options{})); err != nil {
		t.Fatalf("surviving snapshot: %v", err)
	}
}

// TestKillMidSnapshot kills -9 a process that writes snapshots in a loop
// and checks that every snapshot the store lists afterwards restores.
func TestKillMidSnapshot(t *testing.T) {
	if dir := os.Getenv("SNAPSHOT_TEST_WRITER"); dir != "" {
		st, _ := OpenDir(dir)
		for i := 0; ; i++ {
			if _, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, fmt.Sprint(i))}}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "progress"), []byte(fmt.Sprint(i)), 0o600)
		}
	}
	dir := t.TempDir()
	st, _ := OpenDir(dir)
	first, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "first")}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillMidSnapshot$")
	cmd.Env = append(os.Environ(), "SNAPSHOT_TEST_WRITER="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it while it is writing: after a few snapshots landed.
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "progress"))
		if n, err := strconv.Atoi(string(b)); err == nil && n >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	checkAllRestore(t, st, 3, first.ID)
}

// checkAllRestore checks that st lists at least n snapshots, first among
// them, and that each one loads and restores.
func checkAllRestore(t *testing.T, st Store, n int, first string) {
	t.Helper()
	ids, err := st.List(bg)
	if err != nil || len(ids) < n {
		t.Fatalf("ids %v, %v", ids, err)
	}
	for _, id := range ids {
		m, err := Load(bg, st, id)
		if err != nil {
			t.Fatalf("snapshot %s after kill: %v", id, err)
		}
		if err := Restore(bg, st, m.Layer("/"), memfs.New(memfs.Options{})); err != nil {
			t.Fatalf("snapshot %s after kill: %v", id, err)
		}
	}
	if _, err := Load(bg, st, first); err != nil {
		t.Fatalf("the previous snapshot: %v", err)
	}
}
