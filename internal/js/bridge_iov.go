package js

import (
	"context"
	"strconv"
	"strings"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// Bounds of fs.readv/fs.writev: IOV_MAX buffers, beyond which libuv moves
// only the first IOV_MAX (a short read or write), and the bytes one readv
// may ask for (more is a short read too).
const (
	iovMax       = 1024
	maxReadvSize = 16 << 20
)

// iovLengths parses the buffer lengths fs.js passes as "n,n,...".
func iovLengths(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.SplitN(s, ",", iovMax+1)
	parts = parts[:min(len(parts), iovMax)]
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, errno.EINVAL
		}
		out[i] = n
	}
	return out, nil
}

// splitIov cuts b into consecutive buffers of the given lengths, as far
// as b reaches.
func splitIov(b []byte, lens []int) [][]byte {
	out := make([][]byte, 0, len(lens))
	for _, n := range lens {
		n = min(n, len(b))
		if len(b) == 0 {
			break
		}
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out
}

// readvInto reads from fd into one buffer cut into lens, with the
// kernel's readv semantics (kernel.Process.Readv), and returns the bytes
// read; fs.js spreads them back over the caller's buffers.
func readvInto(ctx context.Context, p *kernel.Process, fd int, lens []int, pos int64) ([]byte, error) {
	total := 0
	for i, n := range lens {
		if total+n > maxReadvSize {
			lens = append(lens[:i:i], maxReadvSize-total)
			total = maxReadvSize
			break
		}
		total += n
	}
	buf := make([]byte, total)
	n, err := p.Readv(ctx, fd, splitIov(buf, lens), pos)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// bridgeReadv(fd, "len,len,...", pos) → the bytes read (see
// bytesResult).
func bridgeReadv(r *rt, a *callArgs) (*v8.Value, error) {
	lens, err := iovLengths(a.str(1))
	if err != nil {
		return nil, err
	}
	b, err := readvInto(r.ctx, r.p, a.int(0), lens, int64(a.int(2)))
	if err != nil {
		return nil, err
	}
	return r.bytesResult(b)
}

// bridgeWritev(fd, "len,len,...", data, pos): the buffers concatenated
// are data → bytes written.
func bridgeWritev(r *rt, a *callArgs) (*v8.Value, error) {
	lens, err := iovLengths(a.str(1))
	if err != nil {
		return nil, err
	}
	w, err := r.p.Writev(r.ctx, a.int(0), splitIov(a.bytes(2), lens), int64(a.int(3)))
	if err != nil {
		return nil, err
	}
	return r.num(w), nil
}
