package procfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// lookup walks a slash-separated path below /proc one component at a time,
// without following symlinks, the way the VFS drives a backend.
func lookup(ctx context.Context, fs *FS, path string) (vfs.Inode, error) {
	ino, err := fs.Root(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(path, "/") {
		if name == "" {
			continue
		}
		if ino, err = ino.Lookup(ctx, name); err != nil {
			return nil, err
		}
	}
	return ino, nil
}

func mustLookup(t *testing.T, ctx context.Context, fs *FS, path string) vfs.Inode {
	t.Helper()
	ino, err := lookup(ctx, fs, path)
	if err != nil {
		t.Fatalf("lookup %s: %v", path, err)
	}
	return ino
}

// readAll opens ino and reads it in chunks of 7 bytes, so offsets inside
// lines and strings get exercised.
func readAll(ctx context.Context, ino vfs.Inode) (string, error) {
	h, err := ino.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer h.Close()
	var out []byte
	buf := make([]byte, 7)
	for {
		n, err := h.ReadAt(ctx, buf, int64(len(out)))
		if err != nil {
			return "", err
		}
		if n == 0 {
			return string(out), nil
		}
		out = append(out, buf[:n]...)
	}
}

func mustRead(t *testing.T, ctx context.Context, fs *FS, path string) string {
	t.Helper()
	s, err := readAll(ctx, mustLookup(t, ctx, fs, path))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return s
}

func wantErrno(t *testing.T, what string, err error, want errno.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %s", what, err, want.Name())
	}
}

func readDirAll(t *testing.T, ctx context.Context, ino vfs.Inode, max int) []vfs.Dirent {
	t.Helper()
	var out []vfs.Dirent
	var cookie uint64
	for {
		ents, err := ino.ReadDir(ctx, cookie, max)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) == 0 {
			return out
		}
		out = append(out, ents...)
		cookie = ents[len(ents)-1].Next
	}
}

func names(ents []vfs.Dirent) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	return out
}

func TestRootReadDir(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(42)
	root := mustLookup(t, ctx, fs, "")
	want := []string{"cpuinfo", "loadavg", "meminfo", "mounts", "self", "stat", "sys", "uptime", "version", "1", "42"}
	for _, max := range []int{1, 2, 3, 100} {
		if got := names(readDirAll(t, ctx, root, max)); !slices.Equal(got, want) {
			t.Errorf("max %d: readdir = %v, want %v", max, got, want)
		}
	}
	// Each dirent agrees with a lookup of its name.
	for _, e := range readDirAll(t, ctx, root, 100) {
		ino := mustLookup(t, ctx, fs, e.Name)
		st, err := ino.Stat(ctx)
		if err != nil || st.Ino != e.Ino || st.Type() != e.Type {
			t.Errorf("%s: dirent %+v, stat %+v %v", e.Name, e, st, err)
		}
	}
	st, _ := root.Stat(ctx)
	if st.Mode != vfs.S_IFDIR|0o555 || st.Nlink != 5 || !st.Mtime.Equal(boot) {
		t.Errorf("root stat %+v", st)
	}
	_, err := root.ReadDir(ctx, 0, 0)
	wantErrno(t, "max 0", err, errno.EINVAL)
}

// Processes that come and go during a listing neither duplicate nor drop
// the ones that live throughout.
func TestRootReadDirChurn(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(1)
	root := mustLookup(t, ctx, fs, "")
	for _, pid := range []int{5, 7, 9} {
		k.add(&fakeProc{status: Status{PID: pid}, fds: map[int]vfs.File{}})
	}
	first, err := root.ReadDir(ctx, 0, 11) // fixed entries, 1, 5
	if err != nil {
		t.Fatal(err)
	}
	if got := names(first)[9:]; !slices.Equal(got, []string{"1", "5"}) {
		t.Fatalf("first page ends %v", got)
	}
	k.remove(5)
	k.remove(1)
	k.add(&fakeProc{status: Status{PID: 3}, fds: map[int]vfs.File{}})
	k.add(&fakeProc{status: Status{PID: 8}, fds: map[int]vfs.File{}})
	rest, err := root.ReadDir(ctx, first[len(first)-1].Next, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rest); !slices.Equal(got, []string{"7", "8", "9", "42"}) {
		t.Errorf("rest = %v", got)
	}
}

func TestLookupNames(t *testing.T) {
	fs := New(newFake())
	ctx := as(1)
	root := mustLookup(t, ctx, fs, "")
	for _, name := range []string{"42", "1", "self", "sys", "meminfo"} {
		if _, err := root.Lookup(ctx, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"0", "2", "042", "+42", "-1", "42 ", "4x", "99999999999", "2147483648", "thread-self", "Self"} {
		_, err := root.Lookup(ctx, name)
		wantErrno(t, name, err, errno.ENOENT)
	}
	fd := mustLookup(t, ctx, fs, "42/fd")
	for _, name := range []string{"3", "00", "01", "-0", "1.0"} {
		_, err := fd.Lookup(ctx, name)
		wantErrno(t, "fd "+name, err, errno.ENOENT)
	}
	_, err := mustLookup(t, ctx, fs, "meminfo").Lookup(ctx, "x")
	wantErrno(t, "lookup in file", err, errno.ENOTDIR)
	_, err = mustLookup(t, ctx, fs, "meminfo").ReadDir(ctx, 0, 5)
	wantErrno(t, "readdir of file", err, errno.ENOTDIR)
}

func TestParseNum(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"2147483647", 1<<31 - 1, true},
		{"2147483648", 0, false}, {"9999999999", 0, false}, {"", 0, false},
		{"00", 0, false}, {"012", 0, false}, {"+1", 0, false}, {"-1", 0, false},
		{"1e3", 0, false}, {"١", 0, false}, {"12345678901", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseNum(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseNum(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPidDir(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(42)
	dir := mustLookup(t, ctx, fs, "42")
	want := []string{"cmdline", "comm", "cwd", "environ", "exe", "fd", "fdinfo", "limits", "mounts", "root", "stat", "statm", "status"}
	if got := names(readDirAll(t, ctx, dir, 4)); !slices.Equal(got, want) {
		t.Errorf("readdir = %v, want %v", got, want)
	}
	st, _ := dir.Stat(ctx)
	if st.Mode != vfs.S_IFDIR|0o555 || st.UID != 1000 || st.GID != 100 || st.Nlink != 4 ||
		!st.Mtime.Equal(boot.Add(1500e6)) {
		t.Errorf("pid dir stat %+v", st)
	}
	modes := map[string]uint32{
		"cmdline": vfs.S_IFREG | 0o444, "environ": vfs.S_IFREG | 0o400, "cwd": vfs.S_IFLNK | 0o777,
		"fd": vfs.S_IFDIR | 0o500, "status": vfs.S_IFREG | 0o444, "limits": vfs.S_IFREG | 0o444, "fd/0": vfs.S_IFLNK | 0o500,
		"fd/1": vfs.S_IFLNK | 0o300, "fd/2": vfs.S_IFLNK | 0o700,
		"fdinfo": vfs.S_IFDIR | 0o500, "fdinfo/1": vfs.S_IFREG | 0o400,
	}
	for name, mode := range modes {
		st, err := mustLookup(t, ctx, fs, "42/"+name).Stat(ctx)
		if err != nil || st.Mode != mode || st.UID != 1000 || st.GID != 100 {
			t.Errorf("%s: mode %#o uid %d gid %d (%v), want %#o 1000 100", name, st.Mode, st.UID, st.GID, err, mode)
		}
	}
	// Two lookups of one entry are the same inode.
	a, b := mustLookup(t, ctx, fs, "42/status"), mustLookup(t, ctx, fs, "42/status")
	if a != b {
		t.Error("two lookups of 42/status differ")
	}
}

func TestInodeNumbersUnique(t *testing.T) {
	fs := New(newFake())
	ctx := as(1)
	seen := map[uint64]string{}
	var walk func(path string, ino vfs.Inode)
	walk = func(path string, ino vfs.Inode) {
		st, err := ino.Stat(ctx)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if prev, ok := seen[st.Ino]; ok {
			t.Errorf("%s and %s share inode %d", prev, path, st.Ino)
		}
		seen[st.Ino] = path
		if st.Type() != vfs.TypeDir {
			return
		}
		for _, e := range readDirAll(t, ctx, ino, 100) {
			c, err := ino.Lookup(ctx, e.Name)
			if err != nil {
				t.Fatalf("%s/%s: %v", path, e.Name, err)
			}
			walk(path+"/"+e.Name, c)
		}
	}
	walk("", mustLookup(t, ctx, fs, ""))
	if len(seen) < 40 {
		t.Errorf("walked only %d inodes", len(seen))
	}
}

func TestDeadProcess(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(1)
	dir := mustLookup(t, ctx, fs, "42")
	status := mustLookup(t, ctx, fs, "42/status")
	cwd := mustLookup(t, ctx, fs, "42/cwd")
	fdDir := mustLookup(t, ctx, fs, "42/fd")
	h, err := status.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	k.remove(42)
	check := func(what string, gone bool) {
		t.Helper()
		_, err := dir.Stat(ctx)
		wantErrno(t, what+" stat", err, errno.ENOENT)
		_, err = dir.Lookup(ctx, "status")
		wantErrno(t, what+" lookup", err, errno.ENOENT)
		_, err = dir.ReadDir(ctx, 0, 10)
		wantErrno(t, what+" readdir", err, errno.ENOENT)
		_, err = status.Open(ctx, vfs.O_RDONLY)
		wantErrno(t, what+" open", err, errno.ENOENT)
		_, err = cwd.Readlink(ctx)
		wantErrno(t, what+" readlink", err, errno.ENOENT)
		_, _, err = cwd.(vfs.MagicLink).Resolve(ctx)
		wantErrno(t, what+" resolve", err, errno.ENOENT)
		_, err = fdDir.Lookup(ctx, "1")
		wantErrno(t, what+" fd lookup", err, errno.ENOENT)
		if gone {
			_, err = lookup(ctx, fs, "42")
			wantErrno(t, what+" lookup /proc/42", err, errno.ENOENT)
		}
	}
	check("exited", true)
	// A new process that reuses the pid is not the one the inodes named.
	k.add(&fakeProc{status: Status{PID: 42}, cwd: "/", fds: map[int]vfs.File{}})
	check("reused", false)
	if _, err := lookup(ctx, fs, "42/status"); err != nil {
		t.Errorf("fresh lookup of the new 42: %v", err)
	}
	// An open handle keeps its snapshot.
	buf := make([]byte, 64)
	if n, err := h.ReadAt(ctx, buf, 0); err != nil || !bytes.HasPrefix(buf[:n], []byte("Name:\tsh\n")) {
		t.Errorf("snapshot after exit: %q, %v", buf[:n], err)
	}
	if names := names(readDirAll(t, ctx, mustLookup(t, ctx, fs, ""), 100)); slices.Contains(names, "43") {
		t.Error("phantom pid")
	}
}

func TestCmdlineEnviron(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(42)
	if got := mustRead(t, ctx, fs, "42/cmdline"); got != "sh\x00-c\x00echo hi\x00\x00" {
		t.Errorf("cmdline = %q", got)
	}
	if got := mustRead(t, ctx, fs, "42/environ"); got != "HOME=/home/guest\x00PATH=/usr/bin:/bin\x00X=a b\x00" {
		t.Errorf("environ = %q", got)
	}
	// No strings at all: an empty file.
	k.add(&fakeProc{status: Status{PID: 7}, fds: map[int]vfs.File{}})
	if got := mustRead(t, as(7), fs, "7/cmdline"); got != "" {
		t.Errorf("empty cmdline = %q", got)
	}
}

// Reads at arbitrary offsets and sizes, in any order, return the bytes of
// the joined strings: the cursor cache must never give a stale answer.
func TestStringsHandleOffsets(t *testing.T) {
	strs := []string{"", "a", "", "bcd", "efghij", "", "", "k"}
	want := strings.Join(strs, "\x00") + "\x00"
	h := newStringsHandle(strs)
	ctx := context.Background()
	for off := -1; off <= len(want)+2; off++ {
		for size := 0; size <= len(want)+1; size++ {
			for _, warm := range []int64{0, int64(len(want) - 1), int64(off + 1)} {
				if warm >= 0 && warm < int64(len(want)) {
					_, _ = h.ReadAt(ctx, make([]byte, 1), warm)
				}
				buf := make([]byte, size)
				n, err := h.ReadAt(ctx, buf, int64(off))
				if off < 0 {
					wantErrno(t, "negative offset", err, errno.EINVAL)
					continue
				}
				exp := ""
				if off < len(want) {
					exp = want[off:min(off+size, len(want))]
				}
				if err != nil || string(buf[:n]) != exp {
					t.Fatalf("ReadAt(size %d, off %d) after %d = %q, %v; want %q", size, off, warm, buf[:n], err, exp)
				}
			}
		}
	}
	if _, err := h.WriteAt(ctx, []byte("x"), 0); !errors.Is(err, errno.EBADF) {
		t.Errorf("write: %v", err)
	}
}

var statusLine = regexp.MustCompile(`^([A-Za-z_]+):\t(.*)$`)

// statusFields parses status into its keys and values, failing on any
// line that is not "Key:\tvalue".
func statusFields(t testing.TB, s string) map[string]string {
	t.Helper()
	if !strings.HasSuffix(s, "\n") {
		t.Fatalf("status does not end in a newline: %q", s)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		m := statusLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("status line %q is not Linux's format", l)
		}
		if _, dup := out[m[1]]; dup {
			t.Fatalf("status has %s twice", m[1])
		}
		out[m[1]] = m[2]
	}
	return out
}

func TestStatus(t *testing.T) {
	fs := New(newFake())
	ctx := as(42)
	f := statusFields(t, mustRead(t, ctx, fs, "42/status"))
	want := map[string]string{
		"Name": "sh", "Umask": "0027", "State": "R (running)", "Tgid": "42", "Pid": "42",
		"PPid": "1", "NSpgid": "42", "NSsid": "1", "Uid": "1000\t1000\t1000\t1000",
		"Gid": "100\t100\t100\t100", "VmRSS": "    3072 kB", "VmSize": "   16384 kB",
		"Threads": "1", "FDSize": "64", "CapEff": "0000000000000000",
	}
	for key, v := range want {
		if f[key] != v {
			t.Errorf("%s = %q, want %q", key, f[key], v)
		}
	}
	f = statusFields(t, mustRead(t, ctx, fs, "1/status"))
	if f["State"] != "S (sleeping)" || f["Uid"] != "0\t0\t0\t0" || f["CapEff"] != "000001ffffffffff" || f["Umask"] != "0022" {
		t.Errorf("init status %v", f)
	}
}

func TestStatusHostileName(t *testing.T) {
	k := newFake()
	fs := New(k)
	k.add(&fakeProc{status: Status{PID: 9, Name: "a\nState:\tZ\\x) 1 2 3", State: 'Q', Threads: 3}, fds: map[int]vfs.File{0: newPathless("x", 0), 900: newPathless("y", 0)}})
	f := statusFields(t, mustRead(t, as(9), fs, "9/status"))
	if f["Name"] != `a\nState:`+"\t"+`Z\\x) 1` || f["State"] != "S (sleeping)" || f["Threads"] != "3" || f["FDSize"] != "1024" {
		t.Errorf("hostile status %q", f)
	}
	if got := mustRead(t, as(9), fs, "9/comm"); got != "a\nState:\tZ\\x) 1\n" {
		t.Errorf("comm = %q", got)
	}
	fields := statFields(t, mustRead(t, as(9), fs, "9/stat"))
	if fields[1] != "a\nState:\tZ\\x) 1" || fields[2] != "S" || fields[19] != "3" {
		t.Errorf("stat fields %q", fields[:20])
	}
}

// statFields splits a stat line as procps does: the command name is what
// lies between the first '(' and the last ')'.
func statFields(t testing.TB, s string) []string {
	t.Helper()
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open || !strings.HasSuffix(s, "\n") {
		t.Fatalf("stat %q is not one line with (comm)", s)
	}
	out := []string{strings.TrimSuffix(s[:open], " "), s[open+1 : end]}
	out = append(out, strings.Fields(s[end+1:])...)
	if len(out) != 52 {
		t.Fatalf("stat has %d fields, want 52: %q", len(out), s)
	}
	for i, f := range out {
		if i == 1 || i == 2 {
			continue
		}
		if _, err := strconv.ParseInt(f, 10, 64); err != nil {
			if _, err := strconv.ParseUint(f, 10, 64); err != nil {
				t.Fatalf("stat field %d = %q is not a number", i+1, f)
			}
		}
	}
	return out
}

func TestStat(t *testing.T) {
	fs := New(newFake())
	ctx := as(42)
	f := statFields(t, mustRead(t, ctx, fs, "42/stat"))
	// Fields are 1-based in proc(5); the slice is 0-based.
	want := map[int]string{1: "42", 2: "sh", 3: "R", 4: "1", 5: "42", 6: "1", 7: "0", 8: "-1",
		14: "25", 15: "4", 20: "1", 22: "150", 23: strconv.Itoa(16 << 20), 24: "768", 38: "17"}
	for i, v := range want {
		if f[i-1] != v {
			t.Errorf("stat field %d = %q, want %q", i, f[i-1], v)
		}
	}
	if got := mustRead(t, ctx, fs, "42/statm"); got != "4096 768 0 0 0 4096 0\n" {
		t.Errorf("statm = %q", got)
	}
	if got := mustRead(t, ctx, fs, "42/comm"); got != "sh\n" {
		t.Errorf("comm = %q", got)
	}
}

// TestStatTerminal checks tty_nr and tpgid for a process with a
// controlling terminal (/dev/pts/3, foreground group 42) and for one
// whose terminal has a pts index above 255.
func TestStatTerminal(t *testing.T) {
	k := newFake()
	fs := New(k)
	k.add(&fakeProc{status: Status{PID: 7, PGID: 7, SID: 7, TTY: 136<<8 | 3, TPGID: 42}, fds: map[int]vfs.File{}})
	k.add(&fakeProc{status: Status{PID: 8, TTY: 300&0xff | 136<<8 | (300&^0xff)<<12, TPGID: 8}, fds: map[int]vfs.File{}})
	f := statFields(t, mustRead(t, as(7), fs, "7/stat"))
	if f[6] != strconv.Itoa(0x8803) || f[7] != "42" {
		t.Errorf("tty_nr, tpgid = %s, %s; want %d, 42", f[6], f[7], 0x8803)
	}
	f = statFields(t, mustRead(t, as(8), fs, "8/stat"))
	if f[6] != "1083436" || f[7] != "8" {
		t.Errorf("tty_nr, tpgid = %s, %s; want 1083436, 8", f[6], f[7])
	}
}

func TestCommTruncated(t *testing.T) {
	k := newFake()
	fs := New(k)
	k.add(&fakeProc{status: Status{PID: 5, Name: "abcdefghijklmnopqrstuvwxyz"}, fds: map[int]vfs.File{}})
	if got := mustRead(t, as(5), fs, "5/comm"); got != "abcdefghijklmno\n" {
		t.Errorf("comm = %q", got)
	}
}

func TestSelf(t *testing.T) {
	fs := New(newFake())
	self := mustLookup(t, as(42), fs, "self")
	if _, ok := self.(vfs.MagicLink); ok {
		t.Error("/proc/self is a plain symlink, as on Linux, not a magic link")
	}
	for _, pid := range []int{1, 42} {
		got, err := self.Readlink(as(pid))
		if err != nil || got != strconv.Itoa(pid) {
			t.Errorf("readlink self as %d = %q, %v", pid, got, err)
		}
	}
	_, err := self.Readlink(context.Background())
	wantErrno(t, "self without a caller", err, errno.ENOENT)
	st, _ := self.Stat(as(1))
	if st.Mode != vfs.S_IFLNK|0o777 {
		t.Errorf("self mode %#o", st.Mode)
	}
	_, err = self.Lookup(as(1), "x")
	wantErrno(t, "lookup in self", err, errno.ENOTDIR)
}

func TestProcessLinks(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(42)
	tests := []struct {
		path, target string
		file         bool // Resolve returns the open file
	}{
		{"42/cwd", "/home/guest", false},
		{"42/exe", "/bin/sh", false},
		{"42/root", "/", false},
		{"42/fd/0", "pipe:[3]", true},
		{"42/fd/1", "/home/guest/out.txt", false},
		{"42/fd/2", "pipe:[4]", true},
	}
	for _, tc := range tests {
		ino := mustLookup(t, ctx, fs, tc.path)
		got, err := ino.Readlink(ctx)
		if err != nil || got != tc.target {
			t.Errorf("readlink %s = %q, %v; want %q", tc.path, got, err, tc.target)
		}
		ml, ok := ino.(vfs.MagicLink)
		if !ok {
			t.Fatalf("%s is not a magic link", tc.path)
		}
		p, f, err := ml.Resolve(ctx)
		switch {
		case err != nil:
			t.Errorf("resolve %s: %v", tc.path, err)
		case tc.file && (p != "" || f == nil || f.Path() != tc.target):
			t.Errorf("resolve %s = %q, %v; want the open file", tc.path, p, f)
		case !tc.file && (p != tc.target || f != nil):
			t.Errorf("resolve %s = %q, %v; want %q", tc.path, p, f, tc.target)
		}
		if _, err := ino.Open(ctx, vfs.O_RDONLY); err == nil {
			t.Errorf("open of link %s succeeded", tc.path)
		}
	}
	if got := names(readDirAll(t, ctx, mustLookup(t, ctx, fs, "42/fd"), 2)); !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Errorf("fd dir = %v", got)
	}
	// A closed fd vanishes from the dir and its link stops working.
	fd2 := mustLookup(t, ctx, fs, "42/fd/2")
	k.procs[42].setFD(2, nil)
	if got := names(readDirAll(t, ctx, mustLookup(t, ctx, fs, "42/fd"), 10)); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("fd dir after close = %v", got)
	}
	_, err := fd2.Readlink(ctx)
	wantErrno(t, "readlink closed fd", err, errno.ENOENT)
	_, _, err = fd2.(vfs.MagicLink).Resolve(ctx)
	wantErrno(t, "resolve closed fd", err, errno.ENOENT)
	_, err = fd2.Stat(ctx)
	wantErrno(t, "stat closed fd", err, errno.ENOENT)
	// A zombie has no executable.
	k.add(&fakeProc{status: Status{PID: 50, UID: 1000, State: 'Z'}, fds: map[int]vfs.File{}})
	_, err = mustLookup(t, ctx, fs, "50/exe").Readlink(ctx)
	wantErrno(t, "zombie exe", err, errno.ENOENT)
	_, err = mustLookup(t, ctx, fs, "42/status").Readlink(ctx)
	wantErrno(t, "readlink of a file", err, errno.EINVAL)
}

// A process may inspect its own and same-uid processes; root may inspect
// all; anyone else, and a call without a process, is refused.
func TestInspectPermission(t *testing.T) {
	k := newFake()
	fs := New(k)
	k.add(&fakeProc{status: Status{PID: 60, UID: 1000}, cwd: "/tmp", exe: "/bin/x", environ: []string{"A=1"}, fds: map[int]vfs.File{0: newPathless("/x", 0)}})
	k.add(&fakeProc{status: Status{PID: 61, UID: 2000}, cwd: "/", fds: map[int]vfs.File{}})
	tests := []struct {
		caller context.Context
		target int
		ok     bool
	}{
		{as(42), 42, true}, {as(42), 60, true}, {as(1), 60, true},
		{as(61), 60, false}, {as(60), 1, false}, {context.Background(), 60, false},
		{as(999), 60, false},
	}
	for _, tc := range tests {
		dir := "/" + strconv.Itoa(tc.target)
		ops := map[string]error{}
		_, ops["readlink cwd"] = mustLookup(t, as(1), fs, dir+"/cwd").Readlink(tc.caller)
		_, _, ops["resolve exe"] = mustLookup(t, as(1), fs, dir+"/exe").(vfs.MagicLink).Resolve(tc.caller)
		_, ops["open environ"] = mustLookup(t, as(1), fs, dir+"/environ").Open(tc.caller, vfs.O_RDONLY)
		_, ops["readdir fd"] = mustLookup(t, as(1), fs, dir+"/fd").ReadDir(tc.caller, 0, 10)
		_, ops["lookup fd"] = mustLookup(t, as(1), fs, dir+"/fd").Lookup(tc.caller, "0")
		for op, err := range ops {
			if tc.target != 60 && op == "lookup fd" {
				continue // only 60 has an fd 0
			}
			if tc.ok && err != nil && (tc.target != 1 || op != "lookup fd") {
				t.Errorf("%v on %d: %s: %v", tc.caller.Value(callerKey{}), tc.target, op, err)
			}
			if !tc.ok {
				wantErrno(t, op, err, errno.EACCES)
			}
		}
		// Everyone may read status, as on Linux.
		if _, err := readAll(tc.caller, mustLookup(t, as(1), fs, dir+"/status")); err != nil {
			t.Errorf("status of %d: %v", tc.target, err)
		}
	}
}

func TestReadOnly(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(1)
	for _, path := range []string{"meminfo", "42/status", "42/cmdline", "42/environ", "sys/kernel/hostname"} {
		ino := mustLookup(t, ctx, fs, path)
		for _, fl := range []vfs.OpenFlags{vfs.O_WRONLY, vfs.O_RDWR, vfs.O_RDONLY | vfs.O_TRUNC} {
			_, err := ino.Open(ctx, fl)
			wantErrno(t, path+" open for write", err, errno.EACCES)
		}
		wantErrno(t, path+" chmod", ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o777}), errno.EPERM)
		wantErrno(t, path+" truncate", ino.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize}), errno.EPERM)
		h, err := ino.Open(ctx, vfs.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.WriteAt(ctx, []byte("x"), 0)
		wantErrno(t, path+" write", err, errno.EBADF)
		_, _, err = h.Append(ctx, []byte("x"))
		wantErrno(t, path+" append", err, errno.EBADF)
		if h.Sync(ctx) != nil || h.Close() != nil {
			t.Error("sync or close failed")
		}
	}
	opts := vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644}
	for _, path := range []string{"", "sys", "sys/kernel", "42", "42/fd"} {
		dir := mustLookup(t, ctx, fs, path)
		_, err := dir.Create(ctx, "new", opts)
		wantErrno(t, path+" create", err, errno.EPERM)
		_, err = dir.Mkdir(ctx, "new", opts)
		wantErrno(t, path+" mkdir", err, errno.EPERM)
		_, err = dir.Symlink(ctx, "new", "/", opts)
		wantErrno(t, path+" symlink", err, errno.EPERM)
		wantErrno(t, path+" link", dir.Link(ctx, "new", dir), errno.EPERM)
		wantErrno(t, path+" unlink missing", dir.Unlink(ctx, "missing"), errno.ENOENT)
		wantErrno(t, path+" rmdir missing", dir.Rmdir(ctx, "missing"), errno.ENOENT)
		wantErrno(t, path+" rename missing", dir.Rename(ctx, "missing", dir, "x"), errno.ENOENT)
		wantErrno(t, path+" chmod", dir.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode}), errno.EPERM)
		_, err = dir.Open(ctx, vfs.O_RDONLY)
		wantErrno(t, path+" open dir", err, errno.EISDIR)
	}
	root := mustLookup(t, ctx, fs, "")
	_, err := root.Create(ctx, "meminfo", opts)
	wantErrno(t, "create existing", err, errno.EEXIST)
	_, err = root.Mkdir(ctx, "42", opts)
	wantErrno(t, "mkdir pid", err, errno.EEXIST)
	wantErrno(t, "unlink meminfo", root.Unlink(ctx, "meminfo"), errno.EPERM)
	wantErrno(t, "rmdir pid", root.Rmdir(ctx, "42"), errno.EPERM)
	wantErrno(t, "unlink self", root.Unlink(ctx, "self"), errno.EPERM)
	wantErrno(t, "rename", root.Rename(ctx, "42", root, "43"), errno.EPERM)
	wantErrno(t, "unlink fd", mustLookup(t, ctx, fs, "42/fd").Unlink(ctx, "1"), errno.EPERM)
	_, err = mustLookup(t, ctx, fs, "meminfo").Create(ctx, "x", opts)
	wantErrno(t, "create in file", err, errno.ENOTDIR)
	if fs.ReadOnly() || fs.Release() != nil {
		t.Error("ReadOnly or Release")
	}
	if sf, err := fs.Statfs(ctx); err != nil || sf.Type != procSuperMagic {
		t.Errorf("statfs %+v %v", sf, err)
	}
}

func TestSnapshotAtOpen(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(42)
	ino := mustLookup(t, ctx, fs, "42/status")
	h, err := ino.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	k.procs[42].setState('T')
	var got []byte
	buf := make([]byte, 5)
	for {
		n, err := h.ReadAt(ctx, buf, int64(len(got)))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	if !strings.Contains(string(got), "State:\tR (running)\n") {
		t.Errorf("open handle changed under the reader: %q", got)
	}
	if _, err := h.ReadAt(ctx, buf, -1); !errors.Is(err, errno.EINVAL) {
		t.Errorf("negative offset: %v", err)
	}
	if f := statusFields(t, mustRead(t, ctx, fs, "42/status")); f["State"] != "T (stopped)" {
		t.Errorf("reopened state %q", f["State"])
	}
}

func TestGlobalFiles(t *testing.T) {
	k := newFake()
	fs := New(k)
	ctx := as(42)
	exact := map[string]string{
		"uptime":                "754.25 754.25\n",
		"loadavg":               "0.00 0.00 0.00 1/2 42\n",
		"version":               "Linux version 6.1.0-secexec (secexec) #1 SMP secexec\n",
		"sys/kernel/hostname":   "guestbox\n",
		"sys/kernel/osrelease":  "6.1.0-secexec\n",
		"sys/kernel/ostype":     "Linux\n",
		"sys/kernel/version":    "#1 SMP secexec\n",
		"sys/kernel/domainname": "(none)\n",
		"mounts":                "rootfs / tmpfs rw 0 0\nproc /proc proc rw,nosuid 0 0\ndevtmpfs /dev devtmpfs rw 0 0\n",
		"42/mounts":             "rootfs / tmpfs rw 0 0\nproc /proc proc rw,nosuid 0 0\ndevtmpfs /dev devtmpfs rw 0 0\n",
		"cpuinfo":               cpuinfo,
		"stat":                  "cpu  25 0 4 75396 0 0 0 0 0 0\ncpu0 25 0 4 75396 0 0 0 0 0 0\nintr 0\nctxt 0\nbtime 1741064767\nprocesses 2\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
	}
	for path, want := range exact {
		if got := mustRead(t, ctx, fs, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	mem := mustRead(t, ctx, fs, "meminfo")
	line := regexp.MustCompile(`^([A-Za-z_()]+):\s+(\d+)( kB)?$`)
	vals := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(mem, "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("meminfo line %q", l)
		}
		if m[3] == " kB" && len(l) != len("MemTotal:       16318064 kB") {
			t.Errorf("meminfo line %q is not aligned as Linux's", l)
		}
		vals[m[1]] = m[2]
	}
	if vals["MemTotal"] != "262144" || vals["MemFree"] != "196608" || vals["MemAvailable"] != "196608" || vals["SwapTotal"] != "0" {
		t.Errorf("meminfo %v", vals)
	}
	// Free above total is clamped rather than shown as negative use.
	if got := renderMeminfo(1024, 4096); !bytes.Contains(got, []byte("MemFree:               1 kB\n")) {
		t.Errorf("clamped meminfo %q", got)
	}
	if got := string(renderUptime(-5)); got != "0.00 0.00\n" {
		t.Errorf("negative uptime %q", got)
	}
}

func TestMountsEscaped(t *testing.T) {
	got := string(renderMounts([]MountInfo{
		{Source: "", Target: "/a b\n/c\td\\e", FSType: "", Options: ""},
		{Source: "host:/x y", Target: "/mnt", FSType: "hostfs", Options: "ro"},
	}))
	want := `none /a\040b\012/c\011d\134e none rw 0 0` + "\n" + `host:/x\040y /mnt hostfs ro 0 0` + "\n"
	if got != want {
		t.Errorf("mounts = %q, want %q", got, want)
	}
}

// Readers walk /proc while processes start, exit and change fds; run
// with -race.
func TestConcurrentChurn(t *testing.T) {
	k := newFake()
	fs := New(k)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			pid := 100 + i%7
			k.add(&fakeProc{status: Status{PID: pid, State: 'R'}, cmdline: []string{"x"}, fds: map[int]vfs.File{}})
			k.procs[42].setFD(3+i%3, newPathless("pipe:[9]", vfs.O_RDONLY))
			k.procs[42].setFD(3+(i+1)%3, nil)
			k.remove(pid - 1)
		}
	}()
	ctx := as(1)
	for {
		select {
		case <-done:
			return
		default:
		}
		_ = dump(fs)
		for _, p := range []string{"loadavg", "stat", "42/fd/4", "101/cmdline"} {
			if ino, err := lookup(ctx, fs, p); err == nil {
				_, _ = ino.Stat(ctx)
				if ino.(vfs.Typed).FileType() == vfs.TypeRegular {
					_, _ = readAll(ctx, ino)
				}
			}
		}
	}
}

// TestLimits: /proc/<pid>/limits has Linux's layout, row for row (the
// host's own file is the oracle for the names and columns), with the VM's
// numbers in the rows it enforces.
func TestLimits(t *testing.T) {
	k := newFake()
	k.limits = Limits{CPUTime: 2500 * time.Millisecond, Memory: 64 << 20, Processes: 37, OpenFiles: 99}
	fs := New(k)
	got := mustRead(t, as(42), fs, "42/limits")
	rows := limitRows(t, got)
	want := map[string][2]string{
		"Max cpu time":       {"3", "3"},
		"Max data size":      {"67108864", "67108864"},
		"Max address space":  {"67108864", "67108864"},
		"Max processes":      {"37", "37"},
		"Max open files":     {"99", "99"},
		"Max core file size": {"0", "unlimited"},
		"Max file size":      {"unlimited", "unlimited"},
	}
	for name, v := range want {
		if rows[name] != v {
			t.Errorf("%s = %q, want %q", name, rows[name], v)
		}
	}
	k.limits = Limits{}
	if rows := limitRows(t, mustRead(t, as(42), fs, "42/limits")); rows["Max cpu time"] != [2]string{"unlimited", "unlimited"} {
		t.Errorf("no CPU limit reads %q", rows["Max cpu time"])
	}

	host, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		t.Fatalf("the host's /proc/self/limits is the oracle: %v", err)
	}
	hostLines, ourLines := strings.Split(string(host), "\n"), strings.Split(got, "\n")
	if len(hostLines) != len(ourLines) {
		t.Fatalf("%d lines, the host has %d:\n%s", len(ourLines), len(hostLines), got)
	}
	for i := range hostLines {
		// Names are the first 26 columns; each value column starts where
		// the host's does.
		h, o := hostLines[i], ourLines[i]
		if len(h) < 26 || len(o) < 26 {
			continue
		}
		if h[:26] != o[:26] {
			t.Errorf("line %d: %q, host %q", i, o[:26], h[:26])
		}
		if hf, of := columnStarts(h), columnStarts(o); i == 0 && !slices.Equal(hf, of) {
			t.Errorf("header columns at %v, host %v", of, hf)
		}
	}
}

// limitRows parses a limits file into name -> {soft, hard}.
func limitRows(t *testing.T, s string) map[string][2]string {
	t.Helper()
	rows := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n")[1:] {
		if len(line) < 26 {
			t.Fatalf("short line %q", line)
		}
		f := strings.Fields(line[26:])
		if len(f) < 2 {
			t.Fatalf("line %q", line)
		}
		rows[strings.TrimSpace(line[:26])] = [2]string{f[0], f[1]}
	}
	return rows
}

// columnStarts returns where each field of a header line begins.
func columnStarts(s string) []int {
	var at []int
	for i := range s {
		if s[i] != ' ' && (i == 0 || s[i-1] == ' ' && i > 1 && s[i-2] == ' ') {
			at = append(at, i)
		}
	}
	return at
}
