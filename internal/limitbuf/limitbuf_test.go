package limitbuf

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestBufferStopsAtLimit(t *testing.T) {
	b := New(10)
	if n, err := b.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write: %d %v", n, err)
	}
	if n, err := b.Write([]byte("world!")); n != 5 || !errors.Is(err, ErrLimit) {
		t.Fatalf("Write past the limit: %d %v, want 5 ErrLimit", n, err)
	}
	if got := string(b.Bytes()); got != "helloworld" || !b.Full() || cap(b.Bytes()) > 10 {
		t.Fatalf("holds %q (cap %d)", got, cap(b.Bytes()))
	}
}

// A copy from an endless reader ends at the limit with ErrLimit, and the
// buffer never grew past it.
func TestBufferCopyBomb(t *testing.T) {
	b := New(1 << 20)
	_, err := io.Copy(b, io.LimitReader(zeros{}, 1<<30))
	if !errors.Is(err, ErrLimit) || b.Len() != 1<<20 || cap(b.Bytes()) != 1<<20 {
		t.Fatalf("err %v len %d cap %d", err, b.Len(), cap(b.Bytes()))
	}
	if !bytes.Equal(b.Bytes(), make([]byte, 1<<20)) {
		t.Fatal("wrong contents")
	}
}

func TestBufferExactFit(t *testing.T) {
	b := New(4)
	if _, err := b.Write([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write(nil); err != nil {
		t.Fatal(err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
