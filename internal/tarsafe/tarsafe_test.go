package tarsafe

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzName: an accepted tar entry name never leaves its directory.
func FuzzName(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "a/../../x", "/etc/passwd", "./a", ".", "a/./b/", "a\x00b", "..", "a/..", "/", "a\\..\\b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := Name(name)
		if err != nil {
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(clean, "/../") ||
			strings.HasSuffix(clean, "/..") || strings.ContainsAny(clean, "\x00\\") {
			t.Fatalf("%q accepted as %q", name, clean)
		}
	})
}

func TestName(t *testing.T) {
	for name, want := range map[string]string{"a/b": "a/b", "./a": "a", ".": "", "./": "", "a/./b/": "a/b", "a//b": "a/b"} {
		if got, err := Name(name); err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"", "/", "/etc/passwd", "../x", "a/../b", "a/..", "a\x00b", "a\\b", strings.Repeat("a", MaxName+1)} {
		if _, err := Name(name); !errors.Is(err, ErrUnsafe) {
			t.Errorf("Name(%q): %v, want ErrUnsafe", name, err)
		}
	}
}

// TestSparse: both sparse encodings archive/tar expands are recognised
// from the header alone, before any data is read.
func TestSparse(t *testing.T) {
	if !IsSparse(&tar.Header{Typeflag: tar.TypeGNUSparse}) {
		t.Fatal("GNU sparse type not recognised")
	}
	// A PAX 1.0 sparse entry as GNU tar writes it (archive/tar's writer
	// cannot make one), read back by archive/tar.
	got, err := tar.NewReader(bytes.NewReader(sparseTar(1 << 30))).Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(got); !errors.Is(err, ErrUnsafe) || !IsSparse(got) {
		t.Fatalf("PAX sparse entry %q (size %d) not refused: %v", got.Name, got.Size, err)
	}
	if IsSparse(&tar.Header{Name: "a", Typeflag: tar.TypeReg}) {
		t.Fatal("a plain file is not sparse")
	}
}

// sparseTar is a tar of one PAX 1.0 sparse file "big" of realSize bytes
// holding one data byte at its end.
func sparseTar(realSize int64) []byte {
	var b bytes.Buffer
	rec := func(k, v string) string {
		n := len(k) + len(v) + 3
		for {
			s := fmt.Sprintf("%d %s=%s\n", n, k, v)
			if len(s) == n {
				return s
			}
			n = len(s)
		}
	}
	pax := rec("GNU.sparse.major", "1") + rec("GNU.sparse.minor", "0") + rec("GNU.sparse.name", "big") +
		rec("GNU.sparse.realsize", fmt.Sprint(realSize))
	b.Write(rawHeader("PaxHeaders/big", 'x', int64(len(pax))))
	b.Write(pad([]byte(pax)))
	sparseMap := pad([]byte(fmt.Sprintf("1\n%d\n1\n", realSize-1)))
	b.Write(rawHeader("GNUSparseFile.0/big", '0', int64(len(sparseMap))+1))
	b.Write(sparseMap)
	b.Write(pad([]byte{'x'}))
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

func pad(p []byte) []byte { return append(p, make([]byte, (512-len(p)%512)%512)...) }

// rawHeader is a ustar header block.
func rawHeader(name string, typ byte, size int64) []byte {
	h := make([]byte, 512)
	copy(h, name)
	copy(h[100:], "0000644\x00")
	copy(h[108:], "0000000\x00")
	copy(h[116:], "0000000\x00")
	copy(h[124:], fmt.Sprintf("%011o\x00", size))
	copy(h[136:], "00000000000\x00")
	h[156] = typ
	copy(h[257:], "ustar\x00")
	copy(h[263:], "00")
	copy(h[148:], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
	return h
}
