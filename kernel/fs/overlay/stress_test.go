package overlay

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// TestReadDirCookiesStable lists a merged directory in small batches while
// entries are copied up (including ones not yet listed, and the directory
// itself), created and removed: every entry that exists throughout must be
// listed exactly once.
func TestReadDirCookiesStable(t *testing.T) {
	var upper, lower1, lower2 strings.Builder
	var stable []string
	for i := range 20 {
		fmt.Fprintf(&upper, "f /d/u%03d u\n", i)
		stable = append(stable, fmt.Sprintf("u%03d", i))
	}
	for i := range 60 {
		fmt.Fprintf(&lower1, "f /d/f%03d f\n", i)
		stable = append(stable, fmt.Sprintf("f%03d", i))
	}
	for i := range 40 {
		fmt.Fprintf(&lower2, "f /d/g%03d g\n", i)
		stable = append(stable, fmt.Sprintf("g%03d", i))
	}
	// Shadowed by lower1 and whited out by it.
	lower2.WriteString("f /d/f010 shadowed\nf /d/gone g\n")
	lower1.WriteString("w /d/gone\n")
	for _, withUpper := range []bool{true, false} {
		t.Run(fmt.Sprintf("upper=%v", withUpper), func(t *testing.T) {
			up := spec("")
			if withUpper {
				up = spec("d /d\n" + upper.String())
			} else {
				stable = stable[20:]
			}
			e := newEnv(t, 0, up, spec("d /d\n"+lower1.String()), spec("d /d\n"+lower2.String()))
			root, _ := e.ov.Root(ctx())
			d, err := root.Lookup(ctx(), "d")
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			seen := map[string]int{}
			var made []string
			var cookie uint64
			for round := 0; ; round++ {
				ents, err := d.ReadDir(ctx(), cookie, 3)
				if err != nil {
					t.Fatal(err)
				}
				if len(ents) == 0 {
					break
				}
				for _, ent := range ents {
					seen[ent.Name]++
				}
				cookie = ents[len(ents)-1].Next
				// Copy up two stable entries, listed or not.
				for range 2 {
					name := stable[rng.IntN(len(stable))]
					e.must(e.v.SetAttr(ctx(), vfs.Root, "/d/"+name, true, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600}))
				}
				// Churn: make one entry and remove an older one.
				name := fmt.Sprintf("n%03d", round)
				e.must(e.write("/d/"+name, vfs.O_CREAT, "n"))
				made = append(made, name)
				if len(made) > 2 {
					e.must(e.v.Unlink(ctx(), vfs.Root, "/d/"+made[0]))
					made = made[1:]
				}
			}
			for _, name := range stable {
				if seen[name] != 1 {
					t.Errorf("%s listed %d times", name, seen[name])
				}
			}
			for name, k := range seen {
				if k > 1 {
					t.Errorf("%s listed %d times", name, k)
				}
				if name == "gone" || strings.HasPrefix(name, ".wh.") {
					t.Errorf("hidden name %s listed", name)
				}
			}
		})
	}
}

// TestReadDirBadCookies feeds cookies that no listing returned: they may
// list anything, but must not fail or repeat names.
func TestReadDirBadCookies(t *testing.T) {
	e := newEnv(t, 0, "d /d\nf /d/a a\n", "d /d\nf /d/b b\n", "d /d\nf /d/c c\n")
	root, _ := e.ov.Root(ctx())
	d, _ := root.Lookup(ctx(), "d")
	for _, c := range []uint64{1, 1 << 56, 2<<56 | 1, 3 << 56, 200 << 56, 1<<64 - 1, cookieMask} {
		ents, err := d.ReadDir(ctx(), c, 10)
		if err != nil {
			t.Fatalf("cookie %#x: %v", c, err)
		}
		names := map[string]bool{}
		for _, e := range ents {
			if names[e.Name] {
				t.Fatalf("cookie %#x: %s twice", c, e.Name)
			}
			names[e.Name] = true
		}
	}
}

// TestConcurrentUse runs writers, copy-ups, renames of lower trees and
// readers at once; -race checks the locking, and the final state checks
// that no update was lost.
func TestConcurrentUse(t *testing.T) {
	var lower strings.Builder
	lower.WriteString("d /shared\n")
	const nfiles, ndirs = 8, 3
	for i := range nfiles {
		fmt.Fprintf(&lower, "f /shared/f%d f%d\n", i, i)
	}
	for i := range ndirs {
		fmt.Fprintf(&lower, "d /shared/dir%d\nf /shared/dir%d/x x\nd /shared/dir%d/sub\nf /shared/dir%d/sub/y y\n", i, i, i, i)
	}
	e := newEnv(t, 0, "", spec(lower.String()))
	var appends [nfiles]atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, 100)
	report := func(what string, err error) {
		select {
		case errc <- fmt.Errorf("%s: %w", what, err):
		default:
		}
	}
	tolerable := func(err error) bool {
		return err == nil || errors.Is(err, errno.ENOENT) || errors.Is(err, errno.EEXIST) || errors.Is(err, errno.ENOTEMPTY)
	}
	// Writers in private directories.
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := fmt.Sprintf("/w%d", w)
			if err := e.v.Mkdir(ctx(), vfs.Root, dir, 0o755); err != nil {
				report("mkdir", err)
				return
			}
			for i := range 60 {
				p := fmt.Sprintf("%s/f%d", dir, i)
				if err := e.write(p, vfs.O_CREAT, "data"); err != nil {
					report("write", err)
				}
				if err := e.v.Rename(ctx(), vfs.Root, p, p+".r"); err != nil {
					report("rename", err)
				}
				if i%2 == 0 {
					if err := e.v.Unlink(ctx(), vfs.Root, p+".r"); err != nil {
						report("unlink", err)
					}
				}
				if err := e.v.Mkdir(ctx(), vfs.Root, p+".d", 0o755); err != nil {
					report("mkdir", err)
				}
				if err := e.v.Rmdir(ctx(), vfs.Root, p+".d"); err != nil {
					report("rmdir", err)
				}
			}
		}()
	}
	// Appenders to shared lower files: each first append copies up.
	for a := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(a), 9))
			for range 80 {
				i := rng.IntN(nfiles)
				if err := e.write(fmt.Sprintf("/shared/f%d", i), vfs.O_APPEND, "+"); err != nil {
					report("append", err)
					continue
				}
				appends[i].Add(1)
			}
		}()
	}
	// A renamer moving lower trees back and forth.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 30 {
			k := i % ndirs
			from, to := fmt.Sprintf("/shared/dir%d", k), fmt.Sprintf("/moved%d", k)
			if i/ndirs%2 == 1 {
				from, to = to, from
			}
			if err := e.v.Rename(ctx(), vfs.Root, from, to); err != nil {
				report("rename dir", err)
			}
		}
	}()
	// Readers.
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for range 100 {
				for _, dir := range []string{"/", "/shared", fmt.Sprintf("/shared/dir%d", rng.IntN(ndirs))} {
					if _, err := listVFS(e.v, dir, 2); !tolerable(err) {
						report("list", err)
					}
				}
				p := fmt.Sprintf("/shared/f%d", rng.IntN(nfiles))
				if _, err := e.v.Stat(ctx(), vfs.Root, p); err != nil {
					report("stat", err)
				}
				f, err := e.v.Open(ctx(), vfs.Root, p, vfs.O_RDONLY, 0)
				if err != nil {
					report("open", err)
					continue
				}
				buf := make([]byte, 64)
				if _, err := f.Pread(ctx(), buf, 0); err != nil {
					report("read", err)
				}
				f.DecRef()
				if _, err := e.v.Stat(ctx(), vfs.Root, fmt.Sprintf("/shared/dir%d/sub/y", rng.IntN(ndirs))); !tolerable(err) {
					report("stat moving", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for i := range nfiles {
		want := fmt.Sprintf("f%d", i) + strings.Repeat("+", int(appends[i].Load()))
		if got := e.read(fmt.Sprintf("/shared/f%d", i)); got != want {
			t.Errorf("f%d = %q, want %q", i, got, want)
		}
	}
	for k := range ndirs {
		if got := e.read(fmt.Sprintf("/shared/dir%d/sub/y", k)); got != "y" {
			t.Errorf("dir%d/sub/y = %q", k, got)
		}
	}
	for w := range 3 {
		if got := len(e.ls(fmt.Sprintf("/w%d", w))); got != 30 {
			t.Errorf("/w%d has %d entries, want 30", w, got)
		}
	}
}
