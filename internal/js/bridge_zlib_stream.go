package js

import (
	v8 "github.com/tommie/v8go"
)

// A Brotli stream (zlib.createBrotliCompress / createBrotliDecompress)
// keeps a coder on the Go side for its life (internal/node/brotli's
// Streams, in the process's cryptoState), so each write is coded as it
// comes instead of the whole stream being buffered until its end. A
// coder's window is charged to the process's blob memory while it lives.

// bridgeBrotliNew(compress, quality, lgwin) starts a coder and returns
// its id.
func bridgeBrotliNew(r *rt, a *callArgs) (*v8.Value, error) {
	id, cost, err := r.cs().zs.New(a.int(0) != 0, a.int(1), a.int(2), r.hostBudget())
	if err != nil {
		return nil, nodeError(err)
	}
	r.blobBytes += cost
	return r.num(id), nil
}

// bridgeBrotliPush(id, data, op, maxOutputLength) codes data and returns
// at most maxOutputLength bytes of output; brotliMore then says whether
// a decoder has more to give.
func bridgeBrotliPush(r *rt, a *callArgs) (*v8.Value, error) {
	in := a.bytes(1)
	// A large input (a blob, ours to hand over) is coded beside the
	// call, which gives way to kill and time limit (see heavy).
	run := r.heavy
	if !r.ownsBytes(in) {
		run = nil
	}
	return r.bytesOrError(r.cs().zs.Push(a.int(0), in, a.int(2), min(a.int(3), r.hostBudget()), run))
}

func bridgeBrotliMore(r *rt, a *callArgs) (*v8.Value, error) {
	return r.boolean(r.cs().zs.More()), nil
}

// bridgeBrotliFree ends a coder; JavaScript calls it when its stream
// ends, is closed or is destroyed.
func bridgeBrotliFree(r *rt, a *callArgs) (*v8.Value, error) {
	if cost, ok := r.cs().zs.Free(a.int(0)); ok {
		r.blobBytes -= cost
	}
	return nil, nil
}
