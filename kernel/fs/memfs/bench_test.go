package memfs

import (
	"fmt"
	"testing"

	"github.com/secexec/secexec/kernel/vfs"
)

func BenchmarkLookup(b *testing.B) {
	fs := New(Options{})
	root := rootOf(b, fs)
	for i := range 1000 {
		mustCreate(b, root, fmt.Sprintf("file%d", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := root.Lookup(bg, "file500"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupParallel(b *testing.B) {
	fs := New(Options{})
	root := rootOf(b, fs)
	mustCreate(b, root, "file")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			root.Lookup(bg, "file")
		}
	})
}

func BenchmarkWriteAtSmall(b *testing.B) {
	fs := New(Options{Quota: vfs.NewQuota(1<<30, 0)})
	h := mustOpen(b, mustCreate(b, rootOf(b, fs), "f"), vfs.O_RDWR)
	buf := make([]byte, 128)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := h.WriteAt(bg, buf, int64(i%512)*128); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadAtSmall(b *testing.B) {
	fs := New(Options{})
	h := mustOpen(b, mustCreate(b, rootOf(b, fs), "f"), vfs.O_RDWR)
	mustWrite(b, h, make([]byte, 64<<10), 0)
	buf := make([]byte, 128)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := h.ReadAt(bg, buf, int64(i%512)*128); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	fs := New(Options{})
	n := mustCreate(b, rootOf(b, fs), "f")
	h := mustOpen(b, n, vfs.O_RDWR)
	buf := make([]byte, 100)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%10000 == 0 {
			n.SetAttr(bg, vfs.SetAttr{Mask: vfs.SetSize})
		}
		h.Append(bg, buf)
	}
}

func BenchmarkCreateUnlink(b *testing.B) {
	fs := New(Options{Quota: vfs.NewQuota(0, 1000)})
	root := rootOf(b, fs)
	opts := regOpts(0o644)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := root.Create(bg, "f", opts); err != nil {
			b.Fatal(err)
		}
		if err := root.Unlink(bg, "f"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadDir(b *testing.B) {
	fs := New(Options{})
	root := rootOf(b, fs)
	for i := range 10000 {
		mustCreate(b, root, fmt.Sprintf("file%d", i))
	}
	b.ReportAllocs()
	for b.Loop() {
		cookie := uint64(0)
		for {
			ents, _ := root.ReadDir(bg, cookie, 64)
			if len(ents) == 0 {
				break
			}
			cookie = ents[len(ents)-1].Next
		}
	}
}
