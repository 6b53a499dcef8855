package pipe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"github.com/secexec/secexec/kernel/errno"
)

// held returns the bytes the buffer keeps allocated and the bytes queued.
func (b *buffer) held() (alloc, queued int) {
	for _, c := range b.chunks {
		alloc += cap(c)
		queued += len(c)
	}
	return alloc, queued - b.off
}

func TestIdlePipeIsSmall(t *testing.T) {
	size := unsafe.Sizeof(Pipe{}) + unsafe.Sizeof(Reader{}) + unsafe.Sizeof(Writer{})
	if size > 320 {
		t.Fatalf("an idle pipe with both ends is %d bytes", size)
	}
	r, _ := NewPair(Options{})
	if r.p.buf.chunks != nil {
		t.Fatal("a pipe that carried no data allocated a buffer")
	}
}

func TestChunkGrowth(t *testing.T) {
	var b buffer
	// Short lines: chunks grow geometrically from minChunk, so a few
	// lines cost a few hundred bytes and many lines few chunks.
	line := []byte("12345\n")
	b.write(line)
	if alloc, _ := b.held(); alloc != minChunk {
		t.Fatalf("first line allocated %d", alloc)
	}
	for range 20000 {
		b.write(line)
	}
	alloc, queued := b.held()
	if queued != 20001*len(line) || alloc-queued > maxChunk {
		t.Fatalf("queued %d alloc %d", queued, alloc)
	}
	if len(b.chunks) > queued/maxChunk+8 {
		t.Fatalf("%d chunks for %d bytes", len(b.chunks), queued)
	}

	// A bulk write goes in maxChunk pieces.
	b.reset()
	b.write(make([]byte, 16<<20))
	if len(b.chunks) != 16<<20/maxChunk {
		t.Fatalf("%d chunks for 16 MiB", len(b.chunks))
	}
	// Draining frees as it goes: held memory tracks queued bytes.
	dst := make([]byte, 1<<20)
	for range 8 {
		b.read(dst)
	}
	if alloc, queued := b.held(); alloc-queued > maxChunk {
		t.Fatalf("after partial drain: alloc %d queued %d", alloc, queued)
	}
	for b.read(dst) > 0 {
	}
	if b.chunks != nil {
		t.Fatalf("drained buffer still holds %d chunks", len(b.chunks))
	}
	// A small chunk is kept for reuse once drained.
	b.write(line)
	b.read(dst)
	if alloc, queued := b.held(); alloc != minChunk || queued != 0 {
		t.Fatalf("small drained buffer: alloc %d queued %d", alloc, queued)
	}
}

func TestBufferOrder(t *testing.T) {
	var b buffer
	var model bytes.Buffer
	next := byte(0)
	for i := range 2000 {
		src := make([]byte, (i*7919)%9000)
		for j := range src {
			src[j] = next
			next++
		}
		b.write(src)
		model.Write(src)
		dst := make([]byte, (i*104729)%9500)
		n := b.read(dst)
		if want := model.Next(n); !bytes.Equal(dst[:n], want) || n != min(len(dst), n+model.Len()) {
			t.Fatalf("step %d: read %d bytes that differ from the model", i, n)
		}
	}
}

// FuzzPipeOps runs a sequence of nonblocking operations on two pipes that
// share a small budget and checks every result against an exact model:
// byte order, the atomic-write rule, the room a pipe has, budget charges,
// and the memory the buffers hold.
func FuzzPipeOps(f *testing.F) {
	f.Add([]byte{0, 0xff, 0xff, 1, 0x10, 0, 4, 0xff, 0xff, 0, 0x10, 0})
	f.Add([]byte{0, 0x10, 0x00, 3, 0x10, 0x00, 1, 0x08, 0x00, 2, 0, 0, 0, 0x00, 0x01})
	f.Add([]byte{4, 0x40, 0x00, 5, 0x40, 0x00, 0, 0x00, 0x10, 6, 0, 0, 1, 0xff, 0xff})
	// Stream byte x of each pipe is byte(x): pat[x%256:] is the data that
	// starts there, so the model is two counters and checks are memcmp.
	pat := make([]byte, 256+fuzzBigOp<<16)
	for i := range pat {
		pat[i] = byte(i)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runFuzz(t, pat, data) })
}

const fuzzBigOp = 4 // op 2 writes up to 4 × 64 KiB

func runFuzz(t *testing.T, pat, data []byte) {
	const (
		limit   = 96 << 10
		maxSize = 160 << 10
	)
	// Bounded work per input keeps the fuzzer (and its minimizer) fast.
	if len(data) > 3*500 {
		data = data[:3*500]
	}
	budget := NewBudget(limit)
	type state struct {
		p                 *Pipe
		r                 *Reader
		w                 *Writer
		written, consumed int
	}
	var ps [2]*state
	for i := range ps {
		p := New(Options{MaxSize: maxSize, Budget: budget})
		ps[i] = &state{p: p, r: p.OpenReader(), w: p.OpenWriter()}
	}
	dst := make([]byte, 1<<16)
	for ; len(data) >= 3; data = data[3:] {
		op, k := data[0]>>1, int(data[0]&1)
		s := ps[k]
		n := int(binary.BigEndian.Uint16(data[1:3]))
		buffered := s.written - s.consumed
		switch op % 4 {
		case 0, 2: // TryWrite
			if op%4 == 2 {
				n *= fuzzBigOp
			}
			room := min(maxSize-buffered, max(MinWindow-buffered, 0)+int(budget.available()))
			want := min(n, room)
			if n <= PipeBuf && n > room {
				want = 0 // atomic: all or nothing
			}
			got, err := s.w.TryWrite(pat[s.written%256:][:n])
			if got != want {
				t.Fatalf("TryWrite(%d) with room %d = %d, want %d", n, room, got, want)
			}
			if wantErr := n > 0 && want == 0; wantErr != errors.Is(err, errno.EAGAIN) || (!wantErr && err != nil) {
				t.Fatalf("TryWrite(%d) = %d, %v", n, got, err)
			}
			s.written += got
		case 1: // TryRead
			got, err := s.r.TryRead(dst[:n])
			want := min(n, buffered)
			if got != want || !bytes.Equal(dst[:got], pat[s.consumed%256:][:got]) {
				t.Fatalf("TryRead(%d) = %d, want %d bytes of the stream", n, got, want)
			}
			if wantErr := n > 0 && buffered == 0; wantErr != errors.Is(err, errno.EAGAIN) || (!wantErr && err != nil) {
				t.Fatalf("TryRead(%d) = %d, %v", n, got, err)
			}
			s.consumed += got
		case 3: // last reader closes, a new one opens: data is dropped
			s.r.Close()
			if _, err := s.w.TryWrite([]byte{1}); !errors.Is(err, errno.EPIPE) {
				t.Fatalf("TryWrite with no reader: %v", err)
			}
			s.r = s.p.OpenReader()
			s.consumed = s.written
		}
		var charged int64
		for i, s := range ps {
			s.p.mu.Lock()
			alloc, queued := s.p.buf.held()
			size, ch := s.p.size, s.p.charged
			s.p.mu.Unlock()
			if want := s.written - s.consumed; size != want || queued != size {
				t.Fatalf("pipe %d: size %d, queued %d, model %d", i, size, queued, want)
			}
			if ch != max(size-MinWindow, 0) {
				t.Fatalf("pipe %d: charged %d for %d bytes", i, ch, size)
			}
			if alloc > size+2*maxChunk {
				t.Fatalf("pipe %d: %d bytes allocated for %d queued", i, alloc, size)
			}
			charged += int64(ch)
		}
		if u := budget.Used(); u != charged || u > limit {
			t.Fatalf("budget used %d, pipes charged %d, limit %d", u, charged, limit)
		}
	}
}

func TestTryPeek(t *testing.T) {
	r, w := NewPair(Options{})
	if _, err := r.TryPeek(make([]byte, 4)); err != errno.EAGAIN {
		t.Fatalf("peek empty: %v, want EAGAIN", err)
	}
	big := make([]byte, 3000)
	for i := range big {
		big[i] = byte(i)
	}
	for range 3 {
		if _, err := w.TryWrite(big); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, 7000)
	n, err := r.TryPeek(got)
	if err != nil || n != 7000 {
		t.Fatalf("peek: %d, %v", n, err)
	}
	for i := range n {
		if got[i] != byte(i%3000) {
			t.Fatalf("peek byte %d = %d", i, got[i])
		}
	}
	rd := make([]byte, 9000)
	if n, _ := r.TryRead(rd); n != 9000 {
		t.Fatalf("read after peek: %d", n)
	}
	_ = w.Close()
	if n, err := r.TryPeek(got); n != 0 || err != nil {
		t.Fatalf("peek at EOF: %d, %v", n, err)
	}
}
