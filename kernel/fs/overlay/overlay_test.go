package overlay

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

const mergeUpper spec = `
d /both
f /both/u upper-u
f /shadow upper-shadow
d /dirOverFile
w /gone
d /opq
o /opq
f /opq/onlyupper x
`

const mergeLower1 spec = `
d /both
f /both/l1 l1
f /both/u lower-u
f /shadow lower-shadow
f /dirOverFile lowerfile
f /gone lowergone
d /opq
f /opq/hidden h
d /l1dir
f /l1dir/a a1
w /l1dir/b
f /fod l1fod
`

const mergeLower2 spec = `
d /both
f /both/l2 l2
f /both/l1 l2-l1
d /l1dir
f /l1dir/b b2
f /l1dir/c c2
d /fod
f /fod/x x
d /opq
f /opq/deep d
d /onlyl2
f /onlyl2/z z
f /gone l2gone
`

func TestMergedLookup(t *testing.T) {
	e := newEnv(t, 0, mergeUpper, mergeLower1, mergeLower2)
	tests := []struct {
		path string
		data string // "" with err == 0 means a directory
		err  errno.Errno
	}{
		{"/both/u", "upper-u", 0},
		{"/both/l1", "l1", 0},
		{"/both/l2", "l2", 0},
		{"/shadow", "upper-shadow", 0},
		{"/dirOverFile", "", 0},
		{"/gone", "", errno.ENOENT},
		{"/opq/onlyupper", "x", 0},
		{"/opq/hidden", "", errno.ENOENT},
		{"/opq/deep", "", errno.ENOENT},
		{"/l1dir/a", "a1", 0},
		{"/l1dir/b", "", errno.ENOENT},
		{"/l1dir/c", "c2", 0},
		{"/fod", "l1fod", 0},
		{"/fod/x", "", errno.ENOTDIR},
		{"/onlyl2/z", "z", 0},
		{"/.wh.gone", "", errno.ENOENT},
		{"/opq/.wh..wh..opq", "", errno.ENOENT},
		{"/l1dir/.wh.b", "", errno.ENOENT},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			st, err := e.v.Lstat(ctx(), vfs.Root, tt.path)
			wantErrno(t, "lstat", err, tt.err)
			if tt.err != 0 {
				return
			}
			if tt.data == "" {
				if st.Type() != vfs.TypeDir {
					t.Fatalf("type %o, want dir", st.Mode)
				}
				return
			}
			if got := e.read(tt.path); got != tt.data {
				t.Fatalf("read %q, want %q", got, tt.data)
			}
		})
	}
}

func TestMergedReadDir(t *testing.T) {
	e := newEnv(t, 0, mergeUpper, mergeLower1, mergeLower2)
	tests := []struct {
		dir  string
		want []string
	}{
		{"/", []string{"both", "dirOverFile", "fod", "l1dir", "onlyl2", "opq", "shadow"}},
		{"/both", []string{"l1", "l2", "u"}},
		{"/l1dir", []string{"a", "c"}},
		{"/opq", []string{"onlyupper"}},
		{"/dirOverFile", nil},
		{"/onlyl2", []string{"z"}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			for _, batch := range []int{1, 2, 3, 100} {
				got, err := listVFS(e.v, tt.dir, batch)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tt.want) {
					t.Fatalf("batch %d: %q, want %q", batch, got, tt.want)
				}
			}
		})
	}
	// Listed inode numbers and types agree with Stat.
	root, _ := e.ov.Root(ctx())
	ents, err := root.ReadDir(ctx(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		st := e.stat("/" + d.Name)
		if st.Ino != d.Ino || st.Type() != d.Type {
			t.Errorf("%s: dirent ino %d type %o, stat ino %d type %o", d.Name, d.Ino, d.Type, st.Ino, st.Type())
		}
	}
}

func TestHiddenNames(t *testing.T) {
	e := newEnv(t, 0, "", `
d /d
f /d/f data
`)
	c := vfs.Root
	wantErrno(t, "create", e.write("/.wh.x", vfs.O_CREAT, ""), errno.EINVAL)
	wantErrno(t, "create in lower dir", e.write("/d/.wh.f", vfs.O_CREAT, ""), errno.EINVAL)
	wantErrno(t, "mkdir", e.v.Mkdir(ctx(), c, "/.wh..wh..opq", 0o755), errno.EINVAL)
	wantErrno(t, "symlink", e.v.Symlink(ctx(), c, "d", "/.wh.d"), errno.EINVAL)
	wantErrno(t, "link", e.v.Link(ctx(), c, "/d/f", "/.wh.f"), errno.EINVAL)
	wantErrno(t, "rename", e.v.Rename(ctx(), c, "/d/f", "/d/.wh.g"), errno.EINVAL)
	wantErrno(t, "unlink", e.v.Unlink(ctx(), c, "/.wh.d"), errno.ENOENT)
	// Nothing was copied up by the failures... except what the rejected
	// operations must not have touched at all.
	if d := dump(t, e.upper); len(d) != 0 {
		t.Fatalf("upper changed: %v", keys(d))
	}
	// The overlay's own whiteouts stay invisible after an unlink.
	e.must(e.v.Unlink(ctx(), c, "/d/f"))
	if got := e.ls("/d"); len(got) != 0 {
		t.Fatalf("ls /d = %q", got)
	}
	if _, ok := dump(t, e.upper)["/d/.wh.f"]; !ok {
		t.Fatalf("no whiteout in upper: %v", keys(dump(t, e.upper)))
	}
	_, err := e.v.Lstat(ctx(), c, "/d/.wh.f")
	wantErrno(t, "lstat whiteout", err, errno.ENOENT)
}

func TestUnlinkAndRecreate(t *testing.T) {
	e := newEnv(t, 0, "", `
f /a lower-a
d /d
f /d/x x
`, `
f /a lower2-a
f /b lower2-b
`)
	c := vfs.Root
	e.must(e.v.Unlink(ctx(), c, "/a"))
	_, err := e.v.Lstat(ctx(), c, "/a")
	wantErrno(t, "lstat after unlink", err, errno.ENOENT)
	wantErrno(t, "unlink again", e.v.Unlink(ctx(), c, "/a"), errno.ENOENT)
	if got := e.ls("/"); !slices.Equal(got, []string{"b", "d"}) {
		t.Fatalf("ls / = %q", got)
	}
	// Recreating replaces the whiteout.
	e.must(e.write("/a", vfs.O_CREAT|vfs.O_EXCL, "new"))
	if got := e.read("/a"); got != "new" {
		t.Fatalf("read /a = %q", got)
	}
	up := dump(t, e.upper)
	if _, ok := up["/.wh.a"]; ok {
		t.Fatalf("whiteout left behind: %v", keys(up))
	}
	// Removing an upper file that hides a lower one whites it out too.
	e.must(e.v.Unlink(ctx(), c, "/a"))
	_, err = e.v.Lstat(ctx(), c, "/a")
	wantErrno(t, "lstat after second unlink", err, errno.ENOENT)
	// An upper-only file leaves no whiteout.
	e.must(e.write("/fresh", vfs.O_CREAT, "x"))
	e.must(e.v.Unlink(ctx(), c, "/fresh"))
	if _, ok := dump(t, e.upper)["/.wh.fresh"]; ok {
		t.Fatal("whiteout for an upper-only file")
	}
	// Unlinking inside a lower-only directory copies the directory up.
	e.must(e.v.Unlink(ctx(), c, "/d/x"))
	up = dump(t, e.upper)
	if _, ok := up["/d/.wh.x"]; !ok {
		t.Fatalf("no whiteout in copied-up dir: %v", keys(up))
	}
	wantErrno(t, "unlink dir", e.v.Unlink(ctx(), c, "/d"), errno.EISDIR)
	// The lower layers never change.
	if got := dump(t, e.lower[0]); len(got) != 3 {
		t.Fatalf("lower changed: %v", keys(got))
	}
}

func TestRmdirMergedView(t *testing.T) {
	e := newEnv(t, 0, "", `
d /d
f /d/x x
d /d/sub
d /empty
`)
	c := vfs.Root
	wantErrno(t, "rmdir non-empty", e.v.Rmdir(ctx(), c, "/d"), errno.ENOTEMPTY)
	e.must(e.v.Unlink(ctx(), c, "/d/x"))
	wantErrno(t, "rmdir with subdir", e.v.Rmdir(ctx(), c, "/d"), errno.ENOTEMPTY)
	e.must(e.v.Rmdir(ctx(), c, "/d/sub"))
	// Empty in the merged view, though the upper copy holds whiteouts.
	e.must(e.v.Rmdir(ctx(), c, "/d"))
	_, err := e.v.Lstat(ctx(), c, "/d")
	wantErrno(t, "lstat removed dir", err, errno.ENOENT)
	e.must(e.v.Rmdir(ctx(), c, "/empty"))
	up := dump(t, e.upper)
	if !slices.Equal(keys(up), []string{"/.wh.d", "/.wh.empty"}) {
		t.Fatalf("upper = %v", keys(up))
	}
	wantErrno(t, "rmdir file", e.v.Rmdir(ctx(), c, "/.wh.d"), errno.ENOENT)

	// mkdir over a whiteout makes an opaque directory: the old lower
	// content stays hidden.
	e.must(e.v.Mkdir(ctx(), c, "/d", 0o700))
	if got := e.ls("/d"); len(got) != 0 {
		t.Fatalf("ls new /d = %q", got)
	}
	if st := e.stat("/d"); st.Mode&vfs.ModePerm != 0o700 || st.Nlink != 2 {
		t.Fatalf("new /d mode %o nlink %d", st.Mode, st.Nlink)
	}
	up = dump(t, e.upper)
	if !slices.Equal(keys(up), []string{"/.wh.empty", "/d", "/d/.wh..wh..opq"}) {
		t.Fatalf("upper = %v", keys(up))
	}
	// An opaque upper dir still removes cleanly.
	e.must(e.v.Rmdir(ctx(), c, "/d"))
	if _, err := e.v.Lstat(ctx(), c, "/d"); !errors.Is(err, errno.ENOENT) {
		t.Fatalf("lstat: %v", err)
	}
}

func TestCopyUpDataAndAttrs(t *testing.T) {
	e := newEnv(t, 0, "", `
d /etc 0750 10 20
d /etc/deep 0711 11 21
f /etc/deep/conf hello 0640 12 22
l /etc/link deep/conf
`)
	c := vfs.Root
	before := map[string]vfs.Stat{}
	for _, p := range []string{"/etc", "/etc/deep", "/etc/deep/conf", "/etc/link"} {
		before[p] = e.stat(p)
	}
	rootBefore := e.stat("/")
	// Opening read-only copies nothing.
	f, err := e.v.Open(ctx(), c, "/etc/deep/conf", vfs.O_RDONLY, 0)
	e.must(err)
	defer f.DecRef()
	if d := dump(t, e.upper); len(d) != 0 {
		t.Fatalf("read-only open copied up: %v", keys(d))
	}
	e.must(e.write("/etc/deep/conf", vfs.O_APPEND, " world"))
	if got := e.read("/etc/deep/conf"); got != "hello world" {
		t.Fatalf("read = %q", got)
	}
	// The handle opened before the copy-up reads the new data.
	buf := make([]byte, 32)
	n, err := f.Pread(ctx(), buf, 0)
	e.must(err)
	if string(buf[:n]) != "hello world" {
		t.Fatalf("old handle reads %q", buf[:n])
	}
	// The lower file is untouched.
	if got := dump(t, e.lower[0])["/etc/deep/conf"]; !strings.Contains(got, `"hello"`) {
		t.Fatalf("lower changed: %s", got)
	}
	up := dump(t, e.upper)
	want := map[string]string{
		"/etc":           "40750 10:20 " + lowerTime.Format("2006-01-02T15:04:05Z"),
		"/etc/deep":      "40711 11:21 " + lowerTime.Format("2006-01-02T15:04:05Z"),
		"/etc/deep/conf": "",
	}
	if !slices.Equal(keys(up), keys(want)) {
		t.Fatalf("upper = %v", keys(up))
	}
	for _, p := range []string{"/etc", "/etc/deep"} {
		if up[p] != want[p] {
			t.Errorf("upper %s = %q, want %q", p, up[p], want[p])
		}
	}
	if !strings.HasPrefix(up["/etc/deep/conf"], `100640 12:22 nlink=1 "hello world"`) {
		t.Errorf("upper conf = %q", up["/etc/deep/conf"])
	}
	// Inode numbers survive the copy-up; the parents' times too.
	for p, b := range before {
		a := e.stat(p)
		if a.Ino != b.Ino {
			t.Errorf("%s: ino %d -> %d", p, b.Ino, a.Ino)
		}
		if p != "/etc/deep/conf" && !a.Mtime.Equal(b.Mtime) {
			t.Errorf("%s: mtime %v -> %v", p, b.Mtime, a.Mtime)
		}
	}
	if a := e.stat("/"); !a.Mtime.Equal(rootBefore.Mtime) || a.Ino != rootBefore.Ino {
		t.Errorf("root changed by copy-up: %v/%d -> %v/%d", rootBefore.Mtime, rootBefore.Ino, a.Mtime, a.Ino)
	}

	// A symlink copies up with its target (lchown).
	e.must(e.v.SetAttr(ctx(), c, "/etc/link", false, vfs.SetAttr{Mask: vfs.SetUID, UID: 99}))
	if got := dump(t, e.upper)["/etc/link"]; got != "120777 99:0 -> deep/conf" {
		t.Fatalf("upper link = %q", got)
	}
	if st := e.stat("/etc/link"); st.Ino != before["/etc/link"].Ino {
		t.Fatalf("link ino changed")
	}
	// A FIFO copies up as a FIFO.
	e3 := newEnv(t, 0, "", "p /fifo\n")
	e3.must(e3.v.SetAttr(ctx(), c, "/fifo", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}))
	if got := dump(t, e3.upper)["/fifo"]; got != "10600 3:4" {
		t.Fatalf("upper fifo = %q", got)
	}
	// chmod of a lower directory copies it up alone.
	e2 := newEnv(t, 0, "", "d /x 0755\nf /x/y y\n")
	e2.must(e2.v.SetAttr(ctx(), c, "/x", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o700}))
	if got := keys(dump(t, e2.upper)); !slices.Equal(got, []string{"/x"}) {
		t.Fatalf("upper = %v", got)
	}
	if got := e2.ls("/x"); !slices.Equal(got, []string{"y"}) {
		t.Fatalf("ls /x = %q", got)
	}
}

func TestCopyUpSparseAndTruncate(t *testing.T) {
	lower := build(t, "f /big -\nf /data 0123456789\n")
	root, _ := lower.Root(ctx())
	big, _ := root.Lookup(ctx(), "big")
	h, _ := big.Open(ctx(), vfs.O_WRONLY)
	const size = 64 << 20
	if _, err := h.WriteAt(ctx(), []byte("end"), size-3); err != nil {
		t.Fatal(err)
	}
	h.Close()
	q := vfs.NewQuota(0, 0)
	upper := memfs.New(memfs.Options{Quota: q})
	ov, err := New(upper, lower)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := vfs.New(ctx(), ov, vfs.Options{})
	if err := v.SetAttr(ctx(), vfs.Root, "/big", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	st, _ := v.Stat(ctx(), vfs.Root, "/big")
	if st.Size != size || st.Blocks > 16 {
		t.Fatalf("copied-up sparse file: size %d blocks %d", st.Size, st.Blocks)
	}
	f, _ := v.Open(ctx(), vfs.Root, "/big", vfs.O_RDONLY, 0)
	buf := make([]byte, 3)
	if n, _ := f.Pread(ctx(), buf, size-3); string(buf[:n]) != "end" {
		t.Fatalf("tail = %q", buf[:n])
	}
	f.DecRef()
	// O_TRUNC copies no data, truncate copies only what survives.
	if bytes, _, _, _ := q.Usage(); bytes != size {
		t.Fatalf("quota bytes %d", bytes)
	}
	if err := v.SetAttr(ctx(), vfs.Root, "/data", true, vfs.SetAttr{Mask: vfs.SetSize, Size: 4}); err != nil {
		t.Fatal(err)
	}
	f, _ = v.Open(ctx(), vfs.Root, "/data", vfs.O_RDONLY, 0)
	buf = make([]byte, 16)
	if n, _ := f.Pread(ctx(), buf, 0); string(buf[:n]) != "0123" {
		t.Fatalf("truncated = %q", buf[:n])
	}
	f.DecRef()
}

func TestInodeNumbers(t *testing.T) {
	// Both lowers are fresh memfs instances, so their own inode numbers
	// collide; the overlay's must not.
	e := newEnv(t, 0, "", "f /a a\nd /d\n", "f /b b\nd /e\n")
	seen := map[uint64]string{}
	for _, p := range []string{"/", "/a", "/d", "/b", "/e"} {
		ino := e.stat(p).Ino
		if q, ok := seen[ino]; ok {
			t.Fatalf("%s and %s share ino %d", p, q, ino)
		}
		seen[ino] = p
	}
	ino := e.stat("/b").Ino
	e.must(e.write("/b", 0, "B"))
	e.must(e.v.Rename(ctx(), vfs.Root, "/b", "/d/b2"))
	if got := e.stat("/d/b2").Ino; got != ino {
		t.Fatalf("ino after copy-up and rename %d, want %d", got, ino)
	}
	// A new file gets a number nothing else has.
	e.must(e.write("/new", vfs.O_CREAT, ""))
	if _, ok := seen[e.stat("/new").Ino]; ok {
		t.Fatal("new file reuses an ino")
	}
}

func TestHardLinksBrokenByCopyUp(t *testing.T) {
	e := newEnv(t, 0, "", "f /h1 data\nh /h2 /h1\n")
	s1, s2 := e.stat("/h1"), e.stat("/h2")
	if s1.Ino != s2.Ino || s1.Nlink != 2 {
		t.Fatalf("lower links: ino %d/%d nlink %d", s1.Ino, s2.Ino, s1.Nlink)
	}
	e.must(e.write("/h1", vfs.O_TRUNC, "changed"))
	if got := e.read("/h2"); got != "data" {
		t.Fatalf("other link reads %q", got)
	}
	if a, b := e.stat("/h1"), e.stat("/h2"); a.Ino == b.Ino {
		t.Fatal("two different files share an inode number")
	} else if b.Ino != s2.Ino {
		t.Fatal("the untouched link changed its number")
	}
	// Links made in the overlay are real links.
	e.must(e.v.Link(ctx(), vfs.Root, "/h2", "/h3"))
	e.must(e.write("/h3", vfs.O_APPEND, "+"))
	if got := e.read("/h2"); got != "data+" {
		t.Fatalf("link made after copy-up reads %q", got)
	}
	if a, b := e.stat("/h2"), e.stat("/h3"); a.Ino != b.Ino || a.Nlink != 2 {
		t.Fatalf("new links: ino %d/%d nlink %d", a.Ino, b.Ino, a.Nlink)
	}
}

const renameLower spec = `
d /src 0750 5 6
f /src/a A
d /src/sub
f /src/sub/b B
l /src/sub/l ../a
d /dst0
f /file F
`

func TestRenameLowerDir(t *testing.T) {
	e := newEnv(t, 0, "", renameLower)
	c := vfs.Root
	e.must(e.write("/src/new", vfs.O_CREAT, "N"))
	e.must(e.v.Unlink(ctx(), c, "/src/sub/b"))
	ino := e.stat("/src").Ino
	want := map[string]string{}
	for k, v := range tree(t, e.v) {
		if strings.HasPrefix(k, "/src") {
			want["/moved"+strings.TrimPrefix(k, "/src")] = v
		}
	}
	e.must(e.v.Rename(ctx(), c, "/src", "/moved"))
	got := tree(t, e.v)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := e.v.Lstat(ctx(), c, "/src"); !errors.Is(err, errno.ENOENT) {
		t.Fatalf("old name: %v", err)
	}
	if e.stat("/moved").Ino != ino {
		t.Fatal("ino changed by rename")
	}
	if got := e.read("/moved/sub/l"); got != "A" {
		t.Fatalf("symlink in moved tree reads %q", got)
	}
	// A new directory at the old name is empty.
	e.must(e.v.Mkdir(ctx(), c, "/src", 0o755))
	if got := e.ls("/src"); len(got) != 0 {
		t.Fatalf("ls new /src = %q", got)
	}
	// Rename back over the empty directory, then onto an empty lower dir.
	e.must(e.v.Rename(ctx(), c, "/moved", "/src"))
	if got := e.ls("/src"); !slices.Equal(got, []string{"a", "new", "sub"}) {
		t.Fatalf("ls /src = %q", got)
	}
	if got := e.ls("/src/sub"); !slices.Equal(got, []string{"l"}) {
		t.Fatalf("ls /src/sub = %q", got)
	}
	e.must(e.v.Rename(ctx(), c, "/src", "/dst0"))
	if got := e.ls("/dst0"); !slices.Equal(got, []string{"a", "new", "sub"}) {
		t.Fatalf("ls /dst0 = %q", got)
	}
	if got := e.ls("/"); !slices.Equal(got, []string{"dst0", "file"}) {
		t.Fatalf("ls / = %q", got)
	}
	// Errors as rename(2) has them, judged on the merged view.
	e.must(e.v.Mkdir(ctx(), c, "/full", 0o755))
	e.must(e.write("/full/x", vfs.O_CREAT, ""))
	wantErrno(t, "dir onto non-empty", e.v.Rename(ctx(), c, "/dst0", "/full"), errno.ENOTEMPTY)
	wantErrno(t, "dir onto file", e.v.Rename(ctx(), c, "/dst0", "/file"), errno.ENOTDIR)
	wantErrno(t, "file onto dir", e.v.Rename(ctx(), c, "/file", "/dst0"), errno.EISDIR)
	wantErrno(t, "missing", e.v.Rename(ctx(), c, "/nope", "/x"), errno.ENOENT)
	// Lower layers never change.
	if got := keys(dump(t, e.lower[0])); len(got) != 7 {
		t.Fatalf("lower changed: %v", got)
	}
}

func TestRenameFile(t *testing.T) {
	e := newEnv(t, 0, "", "f /a A\nf /b B\nd /d\n", "f /c C\n")
	c := vfs.Root
	e.must(e.v.Rename(ctx(), c, "/a", "/d/a"))
	e.must(e.v.Rename(ctx(), c, "/c", "/b"))
	if got := e.ls("/"); !slices.Equal(got, []string{"b", "d"}) {
		t.Fatalf("ls / = %q", got)
	}
	if e.read("/b") != "C" || e.read("/d/a") != "A" {
		t.Fatal("renamed content wrong")
	}
	// Renaming onto another name of the same file does nothing.
	e.must(e.v.Link(ctx(), c, "/b", "/b2"))
	e.must(e.v.Rename(ctx(), c, "/b", "/b2"))
	if got := e.ls("/"); !slices.Equal(got, []string{"b", "b2", "d"}) {
		t.Fatalf("ls / after same-file rename = %q", got)
	}
	// Renaming back onto a whited-out name.
	e.must(e.v.Rename(ctx(), c, "/d/a", "/a"))
	if e.read("/a") != "A" {
		t.Fatal("rename back")
	}
	if _, ok := dump(t, e.upper)["/.wh.a"]; ok {
		t.Fatal("whiteout left under a live name")
	}
}

func TestMergedNlink(t *testing.T) {
	e := newEnv(t, 0, "d /m\nd /m/u\n", "d /m\nd /m/a\nd /m/b\nf /m/f f\n")
	c := vfs.Root
	if got := e.stat("/m").Nlink; got != 5 {
		t.Fatalf("nlink %d, want 5", got)
	}
	e.must(e.v.Mkdir(ctx(), c, "/m/c", 0o755))
	e.must(e.v.Rmdir(ctx(), c, "/m/a"))
	e.must(e.v.Rename(ctx(), c, "/m/b", "/m2"))
	if got := e.stat("/m").Nlink; got != 4 {
		t.Fatalf("nlink %d, want 4", got)
	}
	e.must(e.v.Rename(ctx(), c, "/m2", "/m/b2"))
	if got := e.stat("/m").Nlink; got != 5 {
		t.Fatalf("nlink %d, want 5", got)
	}
}

func TestLongNameWhiteout(t *testing.T) {
	long := strings.Repeat("n", vfs.NameMax)
	e := newEnv(t, 0, "", spec("f /"+long+" x\nf /short y\n"))
	c := vfs.Root
	e.must(e.v.Unlink(ctx(), c, "/"+long))
	if got := e.ls("/"); !slices.Equal(got, []string{"short"}) {
		t.Fatalf("ls / = %q", got)
	}
	up := keys(dump(t, e.upper))
	if len(up) != 1 || !strings.HasPrefix(up[0], "/.wh.#") || len(up[0]) > vfs.NameMax+1 {
		t.Fatalf("upper = %q", up)
	}
	e.must(e.write("/"+long, vfs.O_CREAT|vfs.O_EXCL, "again"))
	if got := e.read("/" + long); got != "again" {
		t.Fatalf("read = %q", got)
	}
	if up := keys(dump(t, e.upper)); len(up) != 1 || up[0] != "/"+long {
		t.Fatalf("upper = %q", up)
	}
}

func TestQuotaExhaustedDuringCopyUp(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	lower := spec(`
d /a
d /a/b
d /a/b/c
f /a/b/c/big ` + big + `
f /a/small s
d /tree
f /tree/one ` + big[:40_000] + `
d /tree/sub
f /tree/sub/two ` + big[:40_000] + `
`)
	type op struct {
		name string
		do   func(e *env) error
	}
	ops := []op{
		{"open for write", func(e *env) error { return e.write("/a/b/c/big", vfs.O_APPEND, "y") }},
		{"chmod", func(e *env) error {
			return e.v.SetAttr(ctx(), vfs.Root, "/a/b/c/big", true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600})
		}},
		{"link", func(e *env) error { return e.v.Link(ctx(), vfs.Root, "/a/b/c/big", "/a/big2") }},
		{"rename file", func(e *env) error { return e.v.Rename(ctx(), vfs.Root, "/a/b/c/big", "/big") }},
		{"rename tree", func(e *env) error { return e.v.Rename(ctx(), vfs.Root, "/tree", "/moved") }},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			e := newEnv(t, 50_000, "", lower)
			// Some upper state before, so "unchanged" means something.
			e.must(e.write("/a/small", vfs.O_APPEND, "!"))
			before := dump(t, e.upper)
			beforeTree := tree(t, e.v)
			b0, _, i0, _ := e.quota.Usage()
			wantErrno(t, o.name, o.do(e), errno.ENOSPC)
			if d := diffMaps(before, dump(t, e.upper)); len(d) != 0 {
				t.Fatalf("upper changed:\n%s", strings.Join(d, "\n"))
			}
			if d := diffMaps(beforeTree, tree(t, e.v)); len(d) != 0 {
				t.Fatalf("merged view changed:\n%s", strings.Join(d, "\n"))
			}
			if b1, _, i1, _ := e.quota.Usage(); b1 != b0 || i1 != i0 {
				t.Fatalf("quota %d/%d -> %d/%d", b0, i0, b1, i1)
			}
			// Still fully usable.
			e.must(e.write("/a/small", vfs.O_APPEND, "?"))
			if got := e.read("/a/small"); got != "s!?" {
				t.Fatalf("read = %q", got)
			}
		})
	}
	// Out of inodes: removing a lower file needs a whiteout.
	e := newEnv(t, 0, "", "f /x x\n")
	e.quota = nil
	q := vfs.NewQuota(0, 1)
	upper := memfs.New(memfs.Options{Quota: q})
	ov, err := New(upper, e.lower[0])
	if err != nil {
		t.Fatal(err)
	}
	v, _ := vfs.New(ctx(), ov, vfs.Options{})
	f, err := v.Open(ctx(), vfs.Root, "/y", vfs.O_CREAT|vfs.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.DecRef()
	wantErrno(t, "unlink without inodes", v.Unlink(ctx(), vfs.Root, "/x"), errno.ENOSPC)
	if _, err := v.Lstat(ctx(), vfs.Root, "/x"); err != nil {
		t.Fatalf("x vanished: %v", err)
	}
}

func TestStatfsAndReadOnly(t *testing.T) {
	q := vfs.NewQuota(1<<20, 100)
	upper := memfs.New(memfs.Options{Quota: q})
	ov, err := New(upper, build(t, "f /a a\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ov.Statfs(ctx())
	if err != nil || s.Type != StatfsMagic || s.ReadOnly {
		t.Fatalf("statfs %+v %v", s, err)
	}
	ro, err := New(memfs.New(memfs.Options{ReadOnly: true}), build(t, "f /a a\nd /d\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !ro.ReadOnly() {
		t.Fatal("not read-only")
	}
	root, _ := ro.Root(ctx())
	a, err := root.Lookup(ctx(), "a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Open(ctx(), vfs.O_RDWR)
	wantErrno(t, "open rw", err, errno.EROFS)
	wantErrno(t, "unlink", root.Unlink(ctx(), "a"), errno.EROFS)
	_, err = root.Mkdir(ctx(), "x", vfs.CreateOptions{Mode: vfs.S_IFDIR | 0o755})
	wantErrno(t, "mkdir", err, errno.EROFS)
	h, err := a.Open(ctx(), vfs.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()

	for _, bad := range [][]vfs.FileSystem{{nil}, make([]vfs.FileSystem, MaxLowers+1)} {
		if _, err := New(upper, bad...); !errors.Is(err, errno.EINVAL) {
			t.Fatalf("New with bad lowers: %v", err)
		}
	}
	if _, err := New(nil); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("New(nil): %v", err)
	}
}

func TestInodeInterfaceErrors(t *testing.T) {
	e := newEnv(t, 0, "", "f /f f\nd /d\nl /l f\n")
	root, _ := e.ov.Root(ctx())
	f, _ := root.Lookup(ctx(), "f")
	d, _ := root.Lookup(ctx(), "d")
	l, _ := root.Lookup(ctx(), "l")
	_, err := f.Lookup(ctx(), "x")
	wantErrno(t, "lookup in file", err, errno.ENOTDIR)
	_, err = f.ReadDir(ctx(), 0, 1)
	wantErrno(t, "readdir of file", err, errno.ENOTDIR)
	_, err = d.ReadDir(ctx(), 0, 0)
	wantErrno(t, "readdir max 0", err, errno.EINVAL)
	_, err = f.Readlink(ctx())
	wantErrno(t, "readlink of file", err, errno.EINVAL)
	if s, err := l.Readlink(ctx()); err != nil || s != "f" {
		t.Fatalf("readlink = %q, %v", s, err)
	}
	_, err = d.Open(ctx(), vfs.O_RDONLY)
	wantErrno(t, "open dir", err, errno.EISDIR)
	wantErrno(t, "unlink in file", f.Unlink(ctx(), "x"), errno.ENOTDIR)
	wantErrno(t, "rename from file", f.Rename(ctx(), "x", d, "y"), errno.ENOTDIR)
	wantErrno(t, "rename into file", root.Rename(ctx(), "d", f, "y"), errno.ENOTDIR)
	wantErrno(t, "link to dir", root.Link(ctx(), "d2", d), errno.EPERM)
	foreign, _ := build(t, "f /z z\n").Root(ctx())
	wantErrno(t, "link foreign", root.Link(ctx(), "z", foreign), errno.EXDEV)
	wantErrno(t, "rename foreign", root.Rename(ctx(), "f", foreign, "z"), errno.EXDEV)
	wantErrno(t, "rename dir into itself", root.Rename(ctx(), "d", d, "x"), errno.EINVAL)
	_, err = root.Create(ctx(), "f", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
	wantErrno(t, "create existing", err, errno.EEXIST)
	// A removed directory can hold nothing new.
	e.must(e.v.Rmdir(ctx(), vfs.Root, "/d"))
	_, err = d.Create(ctx(), "x", vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
	wantErrno(t, "create in removed dir", err, errno.ENOENT)
	if ents, err := d.ReadDir(ctx(), 0, 10); err != nil || len(ents) != 0 {
		t.Fatalf("readdir of removed dir: %v %v", ents, err)
	}
	// An open read-only handle of a removed lower file still reads.
	h, err := f.Open(ctx(), vfs.O_RDONLY)
	e.must(err)
	e.must(e.v.Unlink(ctx(), vfs.Root, "/f"))
	buf := make([]byte, 4)
	if n, err := h.ReadAt(ctx(), buf, 0); err != nil || string(buf[:n]) != "f" {
		t.Fatalf("read removed: %q %v", buf[:n], err)
	}
	if _, err := h.WriteAt(ctx(), buf, 0); !errors.Is(err, errno.EBADF) {
		t.Fatalf("write on read handle: %v", err)
	}
	e.must(h.Close())
	wantErrno(t, "double close", h.Close(), errno.EBADF)
	wantErrno(t, "setattr removed lower file", f.SetAttr(ctx(), vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}), errno.ENOENT)
}
