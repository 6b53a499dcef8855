package hostfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// FuzzNames drives every directory operation with guest-chosen names and
// symlink targets next to a hostile symlink: each call must end in success
// or an errno, and nothing outside the root may change.
func FuzzNames(f *testing.F) {
	for _, seed := range [][2]string{
		{"file", "target"}, {"..", "../.."}, {".", "/etc/passwd"}, {"a/b", "abs/x"},
		{"abs", "abs"}, {"with\x00nul", "x\x00y"}, {"日本", "😀"}, {"", ""},
		{string(make([]byte, 256)), "x"}, {"\xff", "/"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, name, target string) {
		ctx := context.Background()
		base := t.TempDir()
		rootDir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		mustMkdir(t, rootDir)
		mustMkdir(t, outside)
		mustWriteFile(t, filepath.Join(outside, "secret"), secret)
		mustSymlink(t, outside, filepath.Join(rootDir, "abs"))
		mustWriteFile(t, filepath.Join(rootDir, "file"), "inside")
		before := hostSnapshot(t, outside)

		fs := newFSAt(t, rootDir, Options{}, quirks{})
		rt := root(t, fs)
		file := walkTo(t, fs, "file")
		ok := func(err error) {
			var e errno.Errno
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("non-errno error %v", err)
			}
		}
		n, err := rt.Lookup(ctx, name)
		ok(err)
		if err == nil {
			data, err := readAll(ctx, n)
			ok(err)
			if bytes.Contains(data, []byte(secret)) {
				t.Fatalf("read the secret via %q", name)
			}
			_, err = n.Readlink(ctx)
			ok(err)
			_, err = n.ReadDir(ctx, 0, 10)
			ok(err)
			ok(n.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMode | vfs.SetSize, Mode: 0o777}))
		}
		_, err = rt.Create(ctx, name, vfs.CreateOptions{Mode: vfs.S_IFREG | 0o644})
		ok(err)
		_, err = rt.Mkdir(ctx, name+"-d", vfs.CreateOptions{Mode: vfs.S_IFDIR | 0o755})
		ok(err)
		_, err = rt.Symlink(ctx, name+"-l", target, vfs.CreateOptions{})
		ok(err)
		if l, err := rt.Lookup(ctx, name+"-l"); err == nil {
			if got, err := l.Readlink(ctx); err != nil || got != target {
				t.Fatalf("Readlink = %q, %v; want %q", got, err, target)
			}
		}
		ok(rt.Link(ctx, name+"-h", file))
		ok(rt.Rename(ctx, "file", rt, name))
		ok(rt.Unlink(ctx, target))
		ok(rt.Rmdir(ctx, target))

		if after := hostSnapshot(t, outside); !mapsEqual(before, after) {
			t.Fatalf("outside changed:\n%v\n%v", before, after)
		}
		if ents, _ := os.ReadDir(base); len(ents) != 2 {
			t.Fatalf("the base directory holds %v", ents)
		}
	})
}

// FuzzFileOps decodes bytes into writes, appends, truncates and reads on
// one host file and compares it with a []byte model after every step.
func FuzzFileOps(f *testing.F) {
	f.Add([]byte{0, 10, 0, 5, 1, 0, 0, 20, 2, 0, 0, 3, 3, 0, 0, 0})
	f.Add([]byte{1, 0, 255, 255, 0, 255, 255, 1, 2, 0, 255, 0})
	f.Add([]byte{2, 255, 255, 0, 0, 0, 0, 4})
	const maxSize = 1 << 16
	f.Fuzz(func(t *testing.T, prog []byte) {
		ctx := context.Background()
		fs, _ := newFS(t, Options{MaxFileSize: maxSize}, quirks{noRWFAppend: len(prog)%2 == 1})
		n, err := root(t, fs).Create(ctx, "f", vfs.CreateOptions{Mode: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		h, err := n.Open(ctx, vfs.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		var model []byte
		grow := func(size int) {
			if size > len(model) {
				model = append(model, make([]byte, size-len(model))...)
			}
		}
		for step := 0; len(prog) >= 4 && step < 64; step++ {
			op, arg := prog[0]%4, int(binary.LittleEndian.Uint16(prog[1:3]))
			ln := int(prog[3])
			prog = prog[4:]
			data := bytes.Repeat([]byte{byte(step + 1)}, ln)
			switch op {
			case 0: // WriteAt
				off := arg * 3
				m, err := h.WriteAt(ctx, data, int64(off))
				want := min(ln, max(0, maxSize-off))
				if off >= maxSize && ln > 0 {
					if errno.Of(err) != errno.EFBIG {
						t.Fatalf("WriteAt past max: %d, %v", m, err)
					}
					continue
				}
				if err != nil || m != want {
					t.Fatalf("WriteAt(%d, %d) = %d, %v; want %d", off, ln, m, err, want)
				}
				if m > 0 {
					grow(off + m)
					copy(model[off:], data[:m])
				}
			case 1: // Append
				m, end, err := h.Append(ctx, data)
				want := min(ln, maxSize-len(model))
				if len(model) >= maxSize && ln > 0 {
					if errno.Of(err) != errno.EFBIG {
						t.Fatalf("Append past max: %d, %v", m, err)
					}
					continue
				}
				if err != nil || m != want || end != int64(len(model)+m) {
					t.Fatalf("Append(%d) = %d, %d, %v; want %d, %d", ln, m, end, err, want, len(model)+want)
				}
				model = append(model, data[:m]...)
			case 2: // truncate
				size := arg
				err := n.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(size)})
				if err != nil {
					t.Fatalf("truncate %d: %v", size, err)
				}
				if size < len(model) {
					model = model[:size]
				} else {
					grow(size)
				}
			case 3: // ReadAt
				off := arg
				buf := make([]byte, ln)
				m, err := h.ReadAt(ctx, buf, int64(off))
				if err != nil {
					t.Fatalf("ReadAt: %v", err)
				}
				want := 0
				if off < len(model) {
					want = min(ln, len(model)-off)
				}
				if m != want || m > 0 && !bytes.Equal(buf[:m], model[off:off+m]) {
					t.Fatalf("ReadAt(%d, %d) = %d bytes, want %d matching the model", off, ln, m, want)
				}
			}
			st, err := n.Stat(ctx)
			if err != nil || st.Size != int64(len(model)) {
				t.Fatalf("size %d, model %d (%v)", st.Size, len(model), err)
			}
		}
		got, err := readAll(ctx, n)
		if err != nil || !bytes.Equal(got, model) {
			t.Fatalf("final content differs from the model (%d vs %d bytes, %v)", len(got), len(model), err)
		}
	})
}
