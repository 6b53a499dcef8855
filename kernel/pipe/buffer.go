package pipe

// Chunk sizes of the pipe buffer. Chunks grow geometrically from minChunk
// to maxChunk so that a pipe carrying a few short lines allocates a few
// hundred bytes, while a bulk transfer moves 64 KiB per allocation.
const (
	minChunk = 512
	maxChunk = 64 << 10
	// keepChunk is the largest chunk kept for reuse once the buffer is
	// empty: it makes the common small write/read ping-pong allocation
	// free without letting an idle pipe pin a large chunk.
	keepChunk = 4 << 10
)

// buffer is a FIFO byte queue made of chunks. Each chunk's length is the
// bytes written into it and its capacity the bytes allocated. Bytes are
// copied exactly once in and once out, so reads and writes are O(bytes
// moved), and the memory held never exceeds the bytes queued plus the
// consumed head of the first chunk plus the unused tail of the last chunk.
type buffer struct {
	chunks [][]byte
	off    int // bytes of chunks[0] already read
}

// write appends all of src.
func (b *buffer) write(src []byte) {
	if n := len(b.chunks); n > 0 {
		t := b.chunks[n-1]
		k := copy(t[len(t):cap(t)], src)
		b.chunks[n-1] = t[:len(t)+k]
		src = src[k:]
	}
	for len(src) > 0 {
		c := make([]byte, b.nextChunkSize(len(src)))
		k := copy(c, src)
		b.chunks = append(b.chunks, c[:k])
		src = src[k:]
	}
}

// nextChunkSize picks the size of a new tail chunk for need more bytes:
// double the current tail, at least need rounded up to a power of two,
// within [minChunk, maxChunk].
func (b *buffer) nextChunkSize(need int) int {
	size := minChunk
	if n := len(b.chunks); n > 0 {
		size = max(size, 2*cap(b.chunks[n-1]))
	}
	for size < need && size < maxChunk {
		size *= 2
	}
	return min(size, maxChunk)
}

// read moves up to len(dst) bytes into dst and returns the count.
func (b *buffer) read(dst []byte) int {
	n := 0
	for n < len(dst) && len(b.chunks) > 0 {
		c := b.chunks[0]
		k := copy(dst[n:], c[b.off:])
		n += k
		b.off += k
		if b.off < len(c) {
			break // dst is full
		}
		b.off = 0
		if len(b.chunks) == 1 && cap(c) <= keepChunk {
			// The buffer is empty: keep a small tail chunk so the
			// next small write does not allocate.
			b.chunks[0] = c[:0]
			break
		}
		b.chunks[0] = nil // let the collector have the chunk now
		b.chunks = b.chunks[1:]
	}
	if len(b.chunks) == 0 {
		b.chunks = nil
	}
	return n
}

// reset drops all data and memory.
func (b *buffer) reset() {
	b.chunks = nil
	b.off = 0
}

// peek copies up to len(dst) bytes from the front into dst without
// consuming them, and returns the count.
func (b *buffer) peek(dst []byte) int {
	n, off := 0, b.off
	for _, c := range b.chunks {
		if n == len(dst) {
			break
		}
		n += copy(dst[n:], c[off:])
		off = 0
	}
	return n
}
