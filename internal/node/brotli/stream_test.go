package brotli

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

// A decoder hands a bomb's output out in pieces of at most ChunkSize,
// asking for further pushes with More; an encoder's flushed output
// decodes to what was written so far.
func TestStreamsBoundTheirOutput(t *testing.T) {
	bomb, err := Compress(make([]byte, 16<<20), 1, 0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	var z Streams
	id, cost, err := z.New(false, 0, 0, 1<<30)
	if err != nil || cost <= 0 {
		t.Fatalf("new decoder: %v, cost %d", err, cost)
	}
	total, pieces := 0, 0
	out, err := z.Push(id, bomb, OpFinish, 1<<30, nil)
	for ; err == nil; out, err = z.Push(id, nil, OpFinish, 1<<30, nil) {
		if len(out) > ChunkSize {
			t.Fatalf("a push gave %d bytes", len(out))
		}
		total += len(out)
		pieces++
		if !z.More() {
			break
		}
	}
	if err != nil || total != 16<<20 || pieces < 16 {
		t.Fatalf("decoded %d bytes in %d pieces: %v", total, pieces, err)
	}
	// Input past the end of the stream is Node's excessive-input error.
	var ze *Error
	if _, err := z.Push(id, []byte{1}, OpProcess, 1<<30, nil); !errors.As(err, &ze) || ze.Errno == 0 {
		t.Fatalf("input after the end: %v", err)
	}
	if c, ok := z.Free(id); !ok || c != cost {
		t.Fatalf("free: %d, %v", c, ok)
	}
	if _, err := z.Push(id, nil, OpProcess, 1, nil); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("push after free: %v", err)
	}

	enc, _, err := z.New(true, 5, 18, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 100000)
	rand.Read(data)
	first, err := z.Push(enc, data[:30000], OpFlush, 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := z.Push(enc, data[30000:], OpFinish, 10, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("encoder output past its bound: %v", err)
	}
	dec, _, _ := z.New(false, 0, 0, 1<<30)
	got, err := z.Push(dec, first, OpProcess, 1<<30, nil)
	if err != nil || !bytes.Equal(got, data[:30000]) {
		t.Fatalf("flushed part decodes to %d bytes: %v", len(got), err)
	}
}

// Coders are bounded in number and by the caller's memory budget.
func TestStreamsBounded(t *testing.T) {
	var z Streams
	if _, _, err := z.New(true, 11, 24, 1<<20); !errors.Is(err, ErrInit) {
		t.Fatalf("a 16 MiB window in a 1 MiB budget: %v", err)
	}
	for i := 0; i < MaxStreams; i++ {
		if _, _, err := z.New(false, 0, 0, 1<<30); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := z.New(false, 0, 0, 1<<30); !errors.Is(err, ErrInit) {
		t.Fatalf("coder past the bound: %v", err)
	}
	if _, err := z.Push(1, nil, OpFinish+1, 1, nil); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("unknown operation: %v", err)
	}
	// A one-shot decode stops at its bound.
	bomb, _ := Compress(make([]byte, 1<<20), 1, 0, 1<<20, nil)
	if _, err := Decompress(bomb, 1<<16); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one-shot bomb: %v", err)
	}
}
