package memfs

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// opDecoder reads operation arguments from fuzz input, yielding zeros once
// the input is used up.
type opDecoder struct{ b []byte }

func (d *opDecoder) byte() byte {
	if len(d.b) == 0 {
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *opDecoder) u24() int64 {
	var x [4]byte
	x[0], x[1], x[2] = d.byte(), d.byte(), d.byte()
	return int64(binary.LittleEndian.Uint32(x[:]))
}

// pattern fills a write's data so that misplaced bytes are visible.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7) + seed
	}
	return p
}

// FuzzOps decodes the input into writes, appends, truncates, reads and
// reopens of one file, under an optional byte quota, and checks every
// result against a plain []byte model: returned counts and errors, the
// size, the quota charged, and the data.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 5, 0, 'a', 3, 0, 0, 0, 9, 0})
	f.Add([]byte{8, 2, 0, 0, 16, 0, 0, 0, 1, 0, 0x20, 0, 0, 0, 0, 0x40, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &opDecoder{b: data}
		// Quota in KiB; 0 means none.
		quota := int64(d.byte()) * 1024
		var q *vfs.Quota
		if quota > 0 {
			q = vfs.NewQuota(quota, 0)
		}
		fs := New(Options{Quota: q})
		node := mustCreate(t, rootOf(t, fs), "f")
		h := mustOpen(t, node, vfs.O_RDWR)
		defer func() { h.Close() }()
		var model []byte

		// write applies a write at off to the model, with the quota's
		// short-write rule, and returns the expected count and errno.
		write := func(p []byte, off int64) (int, errno.Errno) {
			if len(p) == 0 {
				return 0, 0
			}
			end := off + int64(len(p))
			size := int64(len(model))
			if quota > 0 && end > size && end > quota {
				fit := max(size, quota)
				if fit <= off {
					return 0, errno.ENOSPC
				}
				p = p[:fit-off]
				end = fit
			}
			if end > size {
				model = append(model, make([]byte, end-size)...)
			}
			copy(model[off:], p)
			return len(p), 0
		}

		for step := 0; step < 200 && len(d.b) > 0; step++ {
			op := d.byte() % 6
			off := d.u24() % (1 << 20) // 256 pages: holes and page edges
			n := int(d.u24() % (3 * PageSize))
			seed := d.byte()
			switch op {
			case 0: // WriteAt
				p := pattern(n, seed)
				wantN, wantE := write(p, off)
				got, err := h.WriteAt(bg, p, off)
				if got != wantN || errno.Of(err) != wantE {
					t.Fatalf("step %d: WriteAt(%d, %d) = %d, %v; want %d, %v", step, n, off, got, err, wantN, wantE)
				}
			case 1: // Append
				p := pattern(n, seed)
				wantN, wantE := write(p, int64(len(model)))
				got, end, err := h.Append(bg, p)
				if got != wantN || errno.Of(err) != wantE || end != int64(len(model)) {
					t.Fatalf("step %d: Append(%d) = %d, %d, %v; want %d, %d, %v", step, n, got, end, err, wantN, len(model), wantE)
				}
			case 2: // truncate
				size := off
				var want errno.Errno
				if quota > 0 && size > int64(len(model)) && size > quota {
					want = errno.ENOSPC
				} else if size > int64(len(model)) {
					model = append(model, make([]byte, size-int64(len(model)))...)
				} else {
					model = model[:size]
				}
				err := node.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize, Size: size})
				if errno.Of(err) != want {
					t.Fatalf("step %d: truncate(%d) = %v; want %v", step, size, err, want)
				}
			case 3, 4: // ReadAt
				if op == 4 && len(model) > 0 {
					off %= int64(len(model)) // mostly read inside the file
				}
				buf := bytes.Repeat([]byte{0xEE}, n)
				got, err := h.ReadAt(bg, buf, off)
				var want []byte
				if off < int64(len(model)) {
					want = model[off:min(int64(len(model)), off+int64(n))]
				}
				if err != nil || got != len(want) || !bytes.Equal(buf[:got], want) {
					t.Fatalf("step %d: ReadAt(%d, %d) = %d, %v; data mismatch (want %d bytes)", step, n, off, got, err, len(want))
				}
			case 5: // reopen
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
				h = mustOpen(t, node, vfs.O_RDWR)
			}
			st := mustStat(t, node)
			if st.Size != int64(len(model)) {
				t.Fatalf("step %d: size %d, model %d", step, st.Size, len(model))
			}
			if used, _, _, _ := q.Usage(); q != nil && used != st.Size {
				t.Fatalf("step %d: quota charged %d for size %d", step, used, st.Size)
			}
			if maxBlocks := (st.Size + PageSize - 1) / PageSize * (PageSize / 512); st.Blocks > maxBlocks {
				t.Fatalf("step %d: %d blocks for size %d", step, st.Blocks, st.Size)
			}
		}
		if got := readAll(t, node); !bytes.Equal(got, model) {
			t.Fatal("final content differs from the model")
		}
		// Removing the file returns all of its quota.
		h.Close()
		h = mustOpen(t, node, vfs.O_RDONLY)
		root := rootOf(t, fs)
		if err := root.Unlink(bg, "f"); err != nil {
			t.Fatal(err)
		}
		if used, _, _, _ := q.Usage(); q != nil && used != int64(len(model)) {
			t.Fatalf("unlinked open file charged %d", used)
		}
		h.Close()
		h = nopHandle{}
		if used, _, _, _ := q.Usage(); used != 0 {
			t.Fatalf("quota charged %d after the last close", used)
		}
	})
}

// nopHandle stands in for a closed handle so the deferred Close is safe.
type nopHandle struct{ vfs.Handle }

func (nopHandle) Close() error { return nil }
