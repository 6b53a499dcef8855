package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/vfs"
)

func iov(sizes ...int) [][]byte {
	out := make([][]byte, len(sizes))
	for i, n := range sizes {
		out[i] = make([]byte, n)
	}
	return out
}

// readv fills buffers in order and stops at the first short one; on a
// stream only the first buffer is read (no blocking for the next), on a
// regular file it reads on. Empty buffers are skipped.
func TestReadv(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{})
	p := k.Init()
	ctx := context.Background()
	writeFile(t, k.VFS(), "/tmp/f", "abcdefgh", 0o644)
	fd := openAt(t, p, "/tmp/f", vfs.O_RDONLY)

	bufs := iov(3, 0, 3, 5)
	n, err := p.Readv(ctx, fd, bufs, -1)
	if err != nil || n != 8 || string(bufs[0]) != "abc" || string(bufs[2]) != "def" || string(bufs[3][:2]) != "gh" {
		t.Errorf("readv of a file: %d %v %q", n, err, bufs)
	}
	if n, err := p.Readv(ctx, fd, iov(4), -1); n != 0 || err != nil {
		t.Errorf("readv at EOF: %d %v", n, err)
	}
	bufs = iov(2, 2)
	if n, err := p.Readv(ctx, fd, bufs, 5); n != 3 || err != nil || string(bufs[0]) != "fg" || bufs[1][0] != 'h' {
		t.Errorf("preadv at 5: %d %v %q", n, err, bufs)
	}

	r, w, err := p.Pipe(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(ctx, w, []byte("123456")); err != nil {
		t.Fatal(err)
	}
	bufs = iov(3, 10)
	if n, err := p.Readv(ctx, r, bufs, -1); n != 3 || err != nil || string(bufs[0]) != "123" {
		t.Errorf("readv of a pipe, first buffer filled: %d %v %q", n, err, bufs)
	}
	bufs = iov(10, 10)
	if n, err := p.Readv(ctx, r, bufs, -1); n != 3 || err != nil || string(bufs[0][:3]) != "456" {
		t.Errorf("readv of a pipe, short: %d %v %q", n, err, bufs)
	}
	if _, err := p.Readv(ctx, 99, nil, -1); !errors.Is(err, errno.EBADF) {
		t.Errorf("readv of no buffers from a closed descriptor: %v", err)
	}
	if _, err := p.Readv(ctx, r, iov(1), 0); !errors.Is(err, errno.ESPIPE) {
		t.Errorf("preadv of a pipe: %v", err)
	}
}

// writev writes the buffers in order; up to PIPE_BUF bytes in all it is
// one write, so writers to one pipe never interleave inside it.
func TestWritev(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{})
	p := k.Init()
	ctx := context.Background()
	fd := openAt(t, p, "/tmp/f", vfs.O_RDWR|vfs.O_CREAT)
	big := bytes.Repeat([]byte("x"), 3*pipe.PipeBuf)
	n, err := p.Writev(ctx, fd, [][]byte{[]byte("ab"), nil, []byte("cd"), big}, -1)
	if err != nil || n != 4+len(big) {
		t.Fatalf("writev: %d %v", n, err)
	}
	if n, err := p.Writev(ctx, fd, [][]byte{[]byte("Z"), []byte("Y")}, 1); n != 2 || err != nil {
		t.Fatalf("pwritev: %d %v", n, err)
	}
	got := make([]byte, 8)
	if _, err := p.Pread(ctx, fd, got, 0); err != nil || string(got) != "aZYdxxxx" {
		t.Errorf("file holds %q, %v", got, err)
	}
	if _, err := p.Writev(ctx, 99, nil, -1); !errors.Is(err, errno.EBADF) {
		t.Errorf("writev of no buffers to a closed descriptor: %v", err)
	}

	r, w, err := p.Pipe(0)
	if err != nil {
		t.Fatal(err)
	}
	// Many small buffers, PIPE_BUF in all: written one by one, two
	// writers would interleave.
	const pieces, size, rounds = 64, pipe.PipeBuf / 64, 500
	var wg sync.WaitGroup
	for _, c := range []byte("ab") {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := bytes.Repeat([]byte{c}, size)
			bufs := slices.Repeat([][]byte{part}, pieces)
			for range rounds {
				if n, err := p.Writev(ctx, w, bufs, -1); n != pieces*size || err != nil {
					t.Errorf("writev to a pipe: %d %v", n, err)
					return
				}
			}
		}()
	}
	var stream []byte
	buf := make([]byte, 1000)
	for len(stream) < 2*rounds*pieces*size {
		n, err := p.Read(ctx, r, buf)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, buf[:n]...)
	}
	wg.Wait()
	for i := 0; i < len(stream); i += pieces * size {
		block := stream[i : i+pieces*size]
		if bytes.Count(block, block[:1]) != len(block) {
			t.Fatalf("writev of %d bytes interleaved at %d", pieces*size, i)
		}
	}
}
