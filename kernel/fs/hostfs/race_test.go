package hostfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

const raceIterations = 3000

// raceBudget bounds how long a race test keeps trying, past
// raceIterations, for the outcomes it must observe.
const raceBudget = 20 * time.Second

// swapper exchanges two host names atomically (renameat2 RENAME_EXCHANGE)
// in a loop until stopped, as a hostile or merely busy host process might.
type swapper struct {
	stop  chan struct{}
	done  chan struct{}
	swaps atomic.Int64
}

func startSwapper(t *testing.T, a, b string) *swapper {
	s := &swapper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			s.swaps.Add(1)
			runtime.Gosched()
		}
	}()
	return s
}

func (s *swapper) halt() int64 {
	close(s.stop)
	<-s.done
	return s.swaps.Load()
}

// TestRaceDirSwappedForSymlink has a host goroutine swap a directory with a
// symlink to an outside directory holding a secret, while the guest side
// keeps reading dir/secret in every way it can. The secret must never be
// read, listed, or written next to, whichever resolver is in use.
func TestRaceDirSwappedForSymlink(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		for _, target := range []string{"abs", "rel"} {
			t.Run(target, func(t *testing.T) {
				ctx := context.Background()
				base := t.TempDir()
				rootDir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
				mustMkdir(t, filepath.Join(rootDir, "dir"))
				mustMkdir(t, outside)
				mustWriteFile(t, filepath.Join(outside, "secret"), secret)
				mustWriteFile(t, filepath.Join(outside, "only-outside"), secret)
				mustWriteFile(t, filepath.Join(rootDir, "dir", "secret"), "inside")
				mustMkdir(t, filepath.Join(outside, "sub"))
				mustWriteFile(t, filepath.Join(outside, "sub", "deep"), secret)
				mustMkdir(t, filepath.Join(rootDir, "dir", "sub"))
				mustWriteFile(t, filepath.Join(rootDir, "dir", "sub", "deep"), "inside")
				linkTarget := outside
				if target == "rel" {
					linkTarget = "../outside"
				}
				mustSymlink(t, linkTarget, filepath.Join(rootDir, "evil"))
				var secretSt unix.Stat_t
				if err := unix.Stat(filepath.Join(outside, "secret"), &secretSt); err != nil {
					t.Fatal(err)
				}

				fs := newFSAt(t, rootDir, Options{}, quirks{noOpenat2: r.noAt2})
				v, err := vfs.New(ctx, fs, vfs.Options{})
				if err != nil {
					t.Fatal(err)
				}
				c := &vfs.Caller{Cwd: "/"}
				rt := root(t, fs)
				staleFile := &inode{fs: fs, path: "dir/secret", typ: vfs.TypeRegular}
				staleDir := &inode{fs: fs, path: "dir", typ: vfs.TypeDir}
				staleDeep := &inode{fs: fs, path: "dir/sub/deep", typ: vfs.TypeRegular}

				sw := startSwapper(t, filepath.Join(rootDir, "dir"), filepath.Join(rootDir, "evil"))
				var okReads, okLists int
				check := func(what string, data []byte) {
					if strings.Contains(string(data), secret) {
						sw.halt()
						t.Fatalf("iteration read the secret via %s", what)
					}
				}
				deadline := time.Now().Add(raceBudget)
				for i := 0; i < raceIterations || ((sw.swaps.Load() == 0 || okReads == 0) && time.Now().Before(deadline)); i++ {
					// A fresh lookup chain, as the VFS does.
					if d, err := rt.Lookup(ctx, "dir"); err == nil {
						if f, err := d.Lookup(ctx, "secret"); err == nil {
							if st, err := f.Stat(ctx); err == nil && st.Ino == secretSt.Ino {
								sw.halt()
								t.Fatal("stat reached the outside secret")
							}
							if data, err := readAll(ctx, f); err == nil {
								check("lookup chain", data)
								okReads++
							}
						}
					}
					// A path-holding inode reused across the swaps.
					if data, err := readAll(ctx, staleFile); err == nil {
						check("stale inode", data)
						okReads++
					}
					// Deeper, where the walk meets "dir" mid-path.
					if data, err := readAll(ctx, staleDeep); err == nil {
						check("deep stale inode", data)
						okReads++
					}
					// Directory listing.
					if ents, err := staleDir.ReadDir(ctx, 0, 100); err == nil {
						for _, e := range ents {
							if e.Name == "only-outside" {
								sw.halt()
								t.Fatal("listed the outside directory")
							}
						}
						okLists++
					}
					// Writes and creates.
					if h, err := staleFile.Open(ctx, vfs.O_RDWR); err == nil {
						buf := make([]byte, 64)
						n, _ := h.ReadAt(ctx, buf, 0)
						check("rw handle", buf[:n])
						h.Close()
					}
					_, _ = staleDir.Create(ctx, fmt.Sprintf("planted-%d", i), vfs.CreateOptions{Mode: 0o644})
					_ = staleFile.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode, Mode: 0o600})
					// And the same through the VFS.
					if f, err := v.Open(ctx, c, "/dir/secret", vfs.O_RDONLY, 0); err == nil {
						buf := make([]byte, 64)
						n, _ := f.Read(ctx, buf)
						f.DecRef()
						check("vfs open", buf[:n])
					}
				}
				swaps := sw.halt()
				t.Logf("%d swaps, %d successful reads, %d listings", swaps, okReads, okLists)
				if swaps == 0 || okReads == 0 {
					t.Fatalf("the race did not happen: %d swaps, %d reads", swaps, okReads)
				}
				ents, err := os.ReadDir(outside)
				if err != nil || len(ents) != 3 {
					t.Fatalf("outside now holds %v (%v)", ents, err)
				}
				var st unix.Stat_t
				if err := unix.Stat(filepath.Join(outside, "secret"), &st); err != nil || st.Mode&0o777 != 0o644 {
					t.Fatalf("outside secret mode changed: %o, %v", st.Mode, err)
				}
			})
		}
	})
}

// TestRaceFileSwappedForFIFO swaps a regular file with a FIFO while the file
// is opened over and over: an open must never block (a FIFO opened without
// O_NONBLOCK would wait for a peer forever) nor return a FIFO handle.
func TestRaceFileSwappedForFIFO(t *testing.T) {
	forResolvers(t, func(t *testing.T, r resolver) {
		ctx := context.Background()
		fs, host := newFS(t, Options{}, quirks{noOpenat2: r.noAt2})
		mustWriteFile(t, filepath.Join(host, "f"), "regular")
		if err := unix.Mkfifo(filepath.Join(host, "p"), 0o666); err != nil {
			t.Fatal(err)
		}
		f := &inode{fs: fs, path: "f", typ: vfs.TypeRegular}
		sw := startSwapper(t, filepath.Join(host, "f"), filepath.Join(host, "p"))
		var opened, refused int
		// On a loaded machine the swapper can be starved for a whole
		// round: go on (within a bound) until both outcomes were seen.
		deadline := time.Now().Add(raceBudget)
		for i := 0; i < raceIterations || ((opened == 0 || refused == 0) && time.Now().Before(deadline)); i++ {
			fl := []vfs.OpenFlags{vfs.O_RDONLY, vfs.O_WRONLY, vfs.O_RDWR}[i%3]
			h, err := f.Open(ctx, fl)
			if err != nil {
				if e := errno.Of(err); e != errno.ENXIO && e != errno.EAGAIN {
					sw.halt()
					t.Fatalf("Open: unexpected %v", err)
				}
				refused++
				continue
			}
			var st unix.Stat_t
			if err := unix.Fstat(h.(*handle).fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				sw.halt()
				t.Fatalf("handle is not a regular file: mode %o, %v", st.Mode, err)
			}
			h.Close()
			opened++
		}
		swaps := sw.halt()
		t.Logf("%d swaps, %d opened, %d refused", swaps, opened, refused)
		if opened == 0 || refused == 0 {
			t.Fatalf("the race did not happen: %d opened, %d refused", opened, refused)
		}
	})
}

// TestConcurrentAppend checks Append is atomic and reports exact ends, with
// many appenders on separate handles and on one shared handle.
func TestConcurrentAppend(t *testing.T) {
	for _, q := range []struct {
		name string
		q    quirks
	}{{"rwf_append", quirks{}}, {"o_append", quirks{noRWFAppend: true}}} {
		t.Run(q.name, func(t *testing.T) {
			ctx := context.Background()
			fs, host := newFS(t, Options{}, q.q)
			f, err := root(t, fs).Create(ctx, "log", vfs.CreateOptions{Mode: 0o644})
			if err != nil {
				t.Fatal(err)
			}
			shared, err := f.Open(ctx, vfs.O_WRONLY)
			if err != nil {
				t.Fatal(err)
			}
			defer shared.Close()
			const writers, records, size = 8, 200, 64
			var mu sync.Mutex
			ends := map[int64]bool{}
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := shared
					if w%2 == 0 {
						own, err := f.Open(ctx, vfs.O_RDWR)
						if err != nil {
							t.Error(err)
							return
						}
						defer own.Close()
						h = own
					}
					for i := 0; i < records; i++ {
						rec := fmt.Sprintf("w%02d-r%04d-", w, i)
						rec += strings.Repeat(string(rune('a'+w)), size-1-len(rec)) + "\n"
						n, end, err := h.Append(ctx, []byte(rec))
						if err != nil || n != size {
							t.Errorf("Append = %d, %v", n, err)
							return
						}
						if end%size != 0 {
							t.Errorf("end %d not on a record boundary", end)
						}
						mu.Lock()
						if ends[end] {
							t.Errorf("end %d reported twice", end)
						}
						ends[end] = true
						mu.Unlock()
						// Interleave positional writes on the same
						// handles past the end, to see they never turn
						// into appends or get appended over.
						if i%50 == 0 {
							if _, err := h.WriteAt(ctx, nil, 0); err != nil {
								t.Error(err)
							}
						}
					}
				}()
			}
			wg.Wait()
			data, err := os.ReadFile(filepath.Join(host, "log"))
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != writers*records*size {
				t.Fatalf("size %d, want %d", len(data), writers*records*size)
			}
			seen := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				var w int
				if _, err := fmt.Sscanf(line, "w%02d-", &w); err != nil || len(line) != size-1 ||
					strings.Trim(line[11:], string(rune('a'+w))) != "" {
					t.Fatalf("torn record %q", line)
				}
				if seen[line[:11]] {
					t.Fatalf("duplicate record %q", line[:11])
				}
				seen[line[:11]] = true
			}
			if len(seen) != writers*records {
				t.Fatalf("%d records, want %d", len(seen), writers*records)
			}
		})
	}
}
