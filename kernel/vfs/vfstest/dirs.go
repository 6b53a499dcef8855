package vfstest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var dirChecks = []check{
	{"mkdir_stat", func(t *testing.T, e *env) {
		before := e.stat("/").Nlink
		c := *e.root
		c.Umask = 0o027
		wantErrno(t, "mkdir", e.v.Mkdir(e.ctx, &c, e.p("/d"), 0o777), 0)
		st := e.stat("/d")
		if st.Mode != vfs.S_IFDIR|0o750 || st.Nlink != 2 {
			t.Fatalf("new dir: mode %o nlink %d; want 40750, 2", st.Mode, st.Nlink)
		}
		if got := e.stat("/").Nlink; got != before+1 {
			t.Fatalf("parent nlink %d -> %d; want +1", before, got)
		}
		e.mkdir("/d/sub", 0o755)
		if got := e.stat("/d").Nlink; got != 3 {
			t.Fatalf("nlink with one subdir = %d, want 3", got)
		}
		wantErrno(t, "rmdir", e.v.Rmdir(e.ctx, e.root, e.p("/d/sub")), 0)
		if got := e.stat("/d").Nlink; got != 2 {
			t.Fatalf("nlink after rmdir = %d, want 2", got)
		}
	}},
	{"mkdir_errors", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/f", "x")
		wantErrno(t, "mkdir existing", e.v.Mkdir(e.ctx, e.root, e.p("/d"), 0o755), errno.EEXIST)
		wantErrno(t, "mkdir over file", e.v.Mkdir(e.ctx, e.root, e.p("/f"), 0o755), errno.EEXIST)
		wantErrno(t, "mkdir under file", e.v.Mkdir(e.ctx, e.root, e.p("/f/d"), 0o755), errno.ENOTDIR)
		wantErrno(t, "mkdir missing parent", e.v.Mkdir(e.ctx, e.root, e.p("/no/d"), 0o755), errno.ENOENT)
		wantErrno(t, "mkdir /", e.v.Mkdir(e.ctx, e.root, "/", 0o755), errno.EEXIST)
		wantErrno(t, "mkdir trailing slash", e.v.Mkdir(e.ctx, e.root, e.p("/e/"), 0o755), 0)
	}},
	{"rmdir", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/f", "x")
		e.write("/f", "x")
		wantErrno(t, "rmdir non-empty", e.v.Rmdir(e.ctx, e.root, e.p("/d")), errno.ENOTEMPTY)
		wantErrno(t, "rmdir file", e.v.Rmdir(e.ctx, e.root, e.p("/f")), errno.ENOTDIR)
		wantErrno(t, "rmdir missing", e.v.Rmdir(e.ctx, e.root, e.p("/none")), errno.ENOENT)
		wantErrno(t, "rmdir d/.", e.v.Rmdir(e.ctx, e.root, e.p("/d/.")), errno.EINVAL)
		wantErrno(t, "rmdir /", e.v.Rmdir(e.ctx, e.root, "/"), errno.EBUSY)
		wantErrno(t, "unlink d/f", e.v.Unlink(e.ctx, e.root, e.p("/d/f")), 0)
		wantErrno(t, "rmdir empty", e.v.Rmdir(e.ctx, e.root, e.p("/d")), 0)
		_, err := e.v.Stat(e.ctx, e.root, e.p("/d"))
		wantErrno(t, "stat removed dir", err, errno.ENOENT)
	}},
	{"rmdir_dotdot", func(t *testing.T, e *env) {
		// A final ".." is ENOTEMPTY on Linux, whatever it names.
		e.mkdir("/d", 0o755)
		wantErrno(t, "rmdir d/..", e.v.Rmdir(e.ctx, e.root, e.p("/d/..")), errno.ENOTEMPTY)
	}},
	{"rmdir_cwd", func(t *testing.T, e *env) {
		// A process may stand in a directory that is removed: creating in
		// it then fails with ENOENT.
		e.mkdir("/d", 0o755)
		f := e.mustOpen("/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		wantErrno(t, "rmdir", e.v.Rmdir(e.ctx, e.root, e.p("/d")), 0)
		if ents, err := f.ReadDir(e.ctx, 10); err != nil || slices.ContainsFunc(ents, func(d vfs.Dirent) bool {
			return d.Name != "." && d.Name != ".."
		}) {
			t.Fatalf("readdir of removed dir = %v, %v", ents, err)
		}
		c := *e.root
		c.Cwd = e.p("/d")
		_, err := e.v.Open(e.ctx, &c, "x", vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		wantErrno(t, "create in removed cwd", err, errno.ENOENT)
	}},
	{"unlink_dir", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		wantErrno(t, "unlink dir", e.v.Unlink(e.ctx, e.root, e.p("/d")), errno.EISDIR)
	}},
	{"readdir", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		e.write("/d/file", "x")
		e.mkdir("/d/sub", 0o755)
		e.symlink("file", "/d/link")
		f := e.mustOpen("/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		var ents []vfs.Dirent
		for len(ents) <= maxListing {
			batch, err := f.ReadDir(e.ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) == 0 {
				break
			}
			ents = append(ents, batch...)
		}
		var got []string
		for _, d := range ents {
			got = append(got, d.Name)
			want := map[string]vfs.FileType{".": vfs.TypeDir, "..": vfs.TypeDir, "file": vfs.TypeRegular,
				"sub": vfs.TypeDir, "link": vfs.TypeSymlink}[d.Name]
			if d.Type != want {
				t.Fatalf("%s: type %o, want %o", d.Name, d.Type, want)
			}
			path := "/d/" + d.Name
			if d.Name == ".." {
				path = "/"
			}
			if st := e.lstat(path); st.Ino != d.Ino {
				t.Fatalf("%s: dirent ino %d, lstat ino %d", d.Name, d.Ino, st.Ino)
			}
		}
		if want := []string{".", "..", "file", "link", "sub"}; !slices.Equal(sorted(got), want) {
			t.Fatalf("entries %v, want %v", got, want)
		}
		if got[0] != "." || got[1] != ".." {
			t.Fatalf(". and .. not first: %v", got)
		}
	}},
	{"readdir_many", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		var want []string
		for i := range 300 {
			name := fmt.Sprintf("entry-%03d", i)
			e.write("/d/"+name, "")
			want = append(want, name)
		}
		got := e.list("/d", 17)
		if !slices.Equal(sorted(got), sorted(append(want, ".", ".."))) {
			t.Fatalf("listed %d entries, want %d", len(got), len(want)+2)
		}
	}},
	{"readdir_seek", func(t *testing.T, e *env) {
		e.mkdir("/d", 0o755)
		for i := range 10 {
			e.write(fmt.Sprintf("/d/%d", i), "")
		}
		f := e.mustOpen("/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		first, err := f.ReadDir(e.ctx, 5)
		if err != nil || len(first) != 5 {
			t.Fatalf("first batch %v, %v", first, err)
		}
		pos, err := f.Seek(e.ctx, 0, vfs.SeekCur) // telldir
		wantErrno(t, "telldir", err, 0)
		rest1 := e.drain(f)
		if _, err := f.Seek(e.ctx, pos, vfs.SeekSet); err != nil { // seekdir
			t.Fatalf("seekdir: %v", err)
		}
		rest2 := e.drain(f)
		if !slices.Equal(rest1, rest2) || len(first)+len(rest1) != 12 {
			t.Fatalf("after seekdir: %v vs %v", rest1, rest2)
		}
		f.Seek(e.ctx, 0, vfs.SeekSet) // rewinddir
		if all := e.drain(f); len(all) != 12 {
			t.Fatalf("after rewind: %d entries", len(all))
		}
	}},
	{"readdir_concurrent", func(t *testing.T, e *env) {
		// Entries that exist for the whole listing are returned exactly
		// once, however much else is created and removed meanwhile.
		e.mkdir("/d", 0o777)
		const stable = 64
		for i := range stable {
			e.write(fmt.Sprintf("/d/stable-%02d", i), "")
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					p := e.p(fmt.Sprintf("/d/churn-%d-%d", g, i%16))
					if i%32 < 16 {
						if f, err := e.v.Open(e.ctx, e.root, p, vfs.O_WRONLY|vfs.O_CREAT, 0o644); err == nil {
							f.DecRef()
						}
					} else {
						e.v.Unlink(e.ctx, e.root, p)
					}
				}
			}()
		}
		defer func() { stop.Store(true); wg.Wait() }()
		for range 30 {
			seen := map[string]int{}
			for _, n := range e.list("/d", 5) {
				seen[n]++
			}
			for i := range stable {
				if n := seen[fmt.Sprintf("stable-%02d", i)]; n != 1 {
					t.Fatalf("stable-%02d listed %d times", i, n)
				}
			}
		}
	}},
}

// drain reads the rest of an open directory and returns the names.
func (e *env) drain(f vfs.File) []string {
	e.t.Helper()
	var out []string
	for {
		ents, err := f.ReadDir(e.ctx, 3)
		if err != nil {
			e.t.Fatalf("readdir: %v", err)
		}
		if len(ents) == 0 {
			return out
		}
		for _, d := range ents {
			out = append(out, d.Name)
		}
		if len(out) > maxListing {
			e.t.Fatalf("readdir: more than %d entries; cookies do not advance?", maxListing)
		}
	}
}
