package hostfs

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var readdirModes = []struct {
	name string
	q    quirks
}{
	{"offsets", quirks{}},
	{"hashed", quirks{hashedReaddir: true}},
	{"hashed-walk", quirks{hashedReaddir: true, noOpenat2: true}},
}

func TestReadDirModeDetection(t *testing.T) {
	fs, _ := newFS(t, Options{}, quirks{})
	var s unix.Statfs_t
	if err := unix.Fstatfs(fs.rootFD, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type == unix.EXT4_SUPER_MAGIC && fs.q.hashedReaddir {
		t.Fatal("ext4 should use d_off cookies")
	}
	// /proc's directory offsets are positions: hashed.
	if stableDirOffsets(mustOpenPath(t, "/proc")) {
		t.Fatal("procfs reported stable offsets")
	}
}

func mustOpenPath(t *testing.T, p string) int {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func TestReadDirComplete(t *testing.T) {
	for _, m := range readdirModes {
		t.Run(m.name, func(t *testing.T) {
			fs, host := newFS(t, Options{}, m.q)
			const n = 600
			for i := 0; i < n; i++ {
				mustWriteFile(t, filepath.Join(host, fmt.Sprintf("file-%04d", i)), "")
			}
			maxes := []int{1, 7, 100, 5000}
			if m.q.hashedReaddir {
				// Each hashed call scans the whole directory; batches of
				// one would only make the test slow.
				maxes = maxes[1:]
			}
			for _, max := range maxes {
				ents := listAll(t, root(t, fs), max)
				seen := map[string]int{}
				for _, e := range ents {
					seen[e.Name]++
					if e.Type != vfs.TypeRegular || e.Ino == 0 {
						t.Fatalf("entry %+v", e)
					}
					if e.Next == 0 || e.Next >= 1<<63-2 && m.q.hashedReaddir {
						t.Fatalf("cookie %d out of range", e.Next)
					}
				}
				if len(ents) != n || len(seen) != n {
					t.Fatalf("max %d: %d entries, %d distinct; want %d", max, len(ents), len(seen), n)
				}
			}
			// An empty directory, and resuming from the last cookie.
			d := walkTo(t, fs)
			ents, err := d.ReadDir(context.Background(), 0, 10)
			if err != nil || len(ents) != 10 {
				t.Fatalf("ReadDir = %d, %v", len(ents), err)
			}
			more, err := d.ReadDir(context.Background(), ents[9].Next, 10)
			if err != nil || len(more) != 10 || more[0].Name == ents[9].Name {
				t.Fatalf("resumed ReadDir = %v, %v", more, err)
			}
			if err := os.Mkdir(filepath.Join(host, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			if ents := listAll(t, walkTo(t, fs, "empty"), 10); len(ents) != 0 {
				t.Fatalf("empty dir lists %v", ents)
			}
		})
	}
}

// TestReadDirStableUnderChange lists a directory in small batches while
// other goroutines create and delete entries: every entry that exists
// throughout must be returned exactly once.
func TestReadDirStableUnderChange(t *testing.T) {
	for _, m := range readdirModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			fs, host := newFS(t, Options{}, m.q)
			const keep = 400
			for i := 0; i < keep; i++ {
				mustWriteFile(t, filepath.Join(host, fmt.Sprintf("keep-%03d", i)), "")
			}
			rt := root(t, fs)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := 0; w < 2; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						name := fmt.Sprintf("churn-%d-%d", w, i%300)
						if i/300%2 == 0 {
							_, _ = rt.Create(ctx, name, vfs.CreateOptions{Mode: 0o644})
						} else {
							_ = rt.Unlink(ctx, name)
						}
					}
				}()
			}
			for round := 0; round < 10; round++ {
				seen := map[string]int{}
				for _, e := range listAll(t, rt, 5) {
					seen[e.Name]++
				}
				for i := 0; i < keep; i++ {
					name := fmt.Sprintf("keep-%03d", i)
					if seen[name] != 1 {
						close(stop)
						wg.Wait()
						t.Fatalf("round %d: %s returned %d times", round, name, seen[name])
					}
				}
				for name, c := range seen {
					if c != 1 {
						close(stop)
						wg.Wait()
						t.Fatalf("round %d: %s returned %d times", round, name, c)
					}
				}
			}
			close(stop)
			wg.Wait()
		})
	}
}

func TestReadDirUnknownType(t *testing.T) {
	// fillType falls back to fstatat for DT_UNKNOWN, and skips vanished
	// entries.
	fs, host := newFS(t, Options{}, quirks{})
	mustMkdir(t, filepath.Join(host, "d"))
	fd, err := fs.openBeneath("", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	e := vfs.Dirent{Name: "d"}
	if ok, err := fillType(fd, &e, unix.DT_UNKNOWN); !ok || err != nil || e.Type != vfs.TypeDir {
		t.Fatalf("fillType = %v, %v, %v", ok, err, e.Type)
	}
	e = vfs.Dirent{Name: "gone"}
	if ok, err := fillType(fd, &e, unix.DT_UNKNOWN); ok || err != nil {
		t.Fatalf("fillType of a vanished entry = %v, %v", ok, err)
	}
}

func TestReadDirBadCookie(t *testing.T) {
	fs, host := newFS(t, Options{}, quirks{})
	mustWriteFile(t, filepath.Join(host, "f"), "")
	// A cookie the guest made up: an error or a (possibly empty) list,
	// never a panic or a hang.
	for _, c := range []uint64{1, 12345, 1 << 62, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		ents, err := root(t, fs).ReadDir(context.Background(), c, 10)
		if err != nil {
			wantErrno(t, "ReadDir bad cookie", err, errno.EINVAL)
		} else if len(ents) > 1 {
			t.Fatalf("cookie %d: %v", c, ents)
		}
	}
}

// dirent encodes one linux_dirent64 record.
func dirent(ino uint64, off int64, typ uint8, name string) []byte {
	reclen := (19 + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	binary.NativeEndian.PutUint64(b[0:], ino)
	binary.NativeEndian.PutUint64(b[8:], uint64(off))
	binary.NativeEndian.PutUint16(b[16:], uint16(reclen))
	b[18] = typ
	copy(b[19:], name)
	return b
}

func TestParseDirents(t *testing.T) {
	good := append(dirent(1, 10, unix.DT_DIR, "."), dirent(2, 20, unix.DT_REG, "file")...)
	var got []rawDirent
	if err := parseDirents(good, func(d rawDirent) bool { got = append(got, d); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != (rawDirent{ino: 2, off: 20, typ: unix.DT_REG, name: "file"}) {
		t.Fatalf("parsed %+v", got)
	}
	// Stopping early.
	n := 0
	_ = parseDirents(good, func(rawDirent) bool { n++; return false })
	if n != 1 {
		t.Fatalf("callback ran %d times after returning false", n)
	}
	for name, buf := range map[string][]byte{
		"short header": good[:10],
		"zero reclen":  func() []byte { b := dirent(1, 1, 0, "x"); b[16], b[17] = 0, 0; return b }(),
		"long reclen":  func() []byte { b := dirent(1, 1, 0, "x"); b[16] = 200; return b }(),
		"no NUL":       fillNoNUL(dirent(1, 1, 0, "abcd")),
	} {
		if err := parseDirents(buf, func(rawDirent) bool { return true }); err != errno.EIO {
			t.Errorf("%s: err = %v, want EIO", name, err)
		}
	}
}

func fillNoNUL(b []byte) []byte {
	for i := 19; i < len(b); i++ {
		b[i] = 'z'
	}
	return b
}

// FuzzParseDirents feeds arbitrary bytes to the getdents64 decoder: it must
// return entries that lie within the buffer or EIO, and never panic.
func FuzzParseDirents(f *testing.F) {
	f.Add(append(dirent(1, 10, unix.DT_DIR, "."), dirent(2, 20, unix.DT_REG, "file")...))
	f.Add(dirent(7, -1, unix.DT_LNK, "name with spaces"))
	f.Add([]byte{})
	f.Add(make([]byte, 19))
	f.Fuzz(func(t *testing.T, buf []byte) {
		total := 0
		err := parseDirents(buf, func(d rawDirent) bool {
			total += len(d.name) + 20
			if len(d.name) > len(buf) {
				t.Fatalf("name longer than the buffer")
			}
			return true
		})
		if err != nil && err != errno.EIO {
			t.Fatalf("err = %v", err)
		}
		if total > len(buf)+len(buf) {
			t.Fatalf("decoded more than the buffer holds")
		}
	})
}
