package js

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"hash"
	"hash/crc32"
	"sync/atomic"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// maxHashes bounds the live hash objects of a process (a guest that never
// calls digest() cannot grow Go memory without bound).
const maxHashes = 4096

// hashState is a live hash, or (under id 0 only) the process's other
// crypto state.
type hashState struct{ h hash.Hash }

func newHashFunc(alg string) (func() hash.Hash, bool) {
	switch alg {
	case "md5":
		return md5.New, true
	case "sha1":
		return sha1.New, true
	case "sha224":
		return sha256.New224, true
	case "sha256":
		return sha256.New, true
	case "sha384":
		return sha512.New384, true
	case "sha512":
		return sha512.New, true
	case "sha512-224":
		return sha512.New512_224, true
	case "sha512-256":
		return sha512.New512_256, true
	case "sha3-224":
		return func() hash.Hash { return sha3.New224() }, true
	case "sha3-256":
		return func() hash.Hash { return sha3.New256() }, true
	case "sha3-384":
		return func() hash.Hash { return sha3.New384() }, true
	case "sha3-512":
		return func() hash.Hash { return sha3.New512() }, true
	}
	return nil, false
}

func (r *rt) hashArg(args []*v8.Value) (*hashState, int, error) {
	id, err := argInt(args, 0)
	if err != nil {
		return nil, 0, err
	}
	h, ok := r.hashes[id]
	if !ok {
		return nil, 0, errno.EINVAL
	}
	return h, id, nil
}

func (r *rt) addHash(h hash.Hash) (*v8.Value, error) {
	if len(r.hashes) >= maxHashes {
		return nil, guestError("ERR_CRYPTO_TOO_MANY_HASHES: too many unfinished hash objects")
	}
	r.nextHash++
	r.hashes[r.nextHash] = &hashState{h: h}
	return r.num(r.nextHash), nil
}

// maxZlibInput bounds compression input; decompression output is bounded
// by the caller's maxOutputLength and the external memory limit.
const maxZlibInput = 1 << 30

// maxPBKDF2Work bounds one pbkdf2 call's iterations times output blocks
// (about 20 s of one core); from minHeavyPBKDF2 on it runs beside the
// bridge call (see heavy).
const (
	maxPBKDF2Work  = 1 << 25
	minHeavyPBKDF2 = 1 << 16
)

func init() {
	register("hashNew", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		alg, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		keyN, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		newH, ok := newHashFunc(alg)
		if !ok {
			return nil, errno.EINVAL
		}
		if keyN < 0 && keyN == -1 {
			return r.addHash(newH())
		}
		key, err := r.bytesArg(keyN)
		if err != nil {
			return nil, err
		}
		return r.addHash(hmac.New(newH, append([]byte(nil), key...)))
	})
	register("hashUpdate", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, _, err := r.hashArg(args)
		if err != nil {
			return nil, err
		}
		n, err := argInt(args, 1)
		if err != nil {
			return nil, err
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		h.h.Write(b)
		return nil, nil
	})
	register("hashDigest", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, id, err := r.hashArg(args)
		if err != nil {
			return nil, err
		}
		delete(r.hashes, id)
		return r.bytesResult(h.h.Sum(nil))
	})
	register("hashCopy", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, _, err := r.hashArg(args)
		if err != nil {
			return nil, err
		}
		c, ok := h.h.(hash.Cloner)
		if !ok {
			return nil, errno.ENOSYS
		}
		n, err := c.Clone()
		if err != nil {
			return nil, errno.ENOSYS
		}
		return r.addHash(n)
	})
	register("kdfInput", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		i, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil || i < 0 || i > 1 {
			return nil, errno.EINVAL
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		r.kdf[i] = append([]byte(nil), b...)
		return nil, nil
	})
	register("pbkdf2", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		iter, err1 := argInt(args, 0)
		keyLen, err2 := argInt(args, 1)
		alg, err3 := argString(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || iter < 1 || keyLen < 0 || keyLen > 1<<20 {
			return nil, errno.EINVAL
		}
		newH, ok := newHashFunc(alg)
		if !ok {
			return nil, errno.EINVAL
		}
		// The work (iterations times output blocks), which the guest
		// chooses, is bounded: Go code does not see TerminateExecution. A
		// large one runs beside the call (heavy), which gives way to kill
		// and the limits and charges its CPU to the process.
		blocks := (keyLen + newH().Size() - 1) / newH().Size()
		work := int64(iter) * int64(max(blocks, 1))
		if iter > 10_000_000 || work > maxPBKDF2Work {
			return nil, errno.EINVAL
		}
		pw, salt := string(r.kdf[0]), r.kdf[1]
		r.kdf = [2][]byte{}
		var out []byte
		run := func(*atomic.Bool) error {
			var kerr error
			out, kerr = pbkdf2.Key(newH, pw, salt, iter, keyLen)
			return kerr
		}
		var err error
		if work < minHeavyPBKDF2 {
			err = run(nil)
		} else {
			err = r.heavy(run)
		}
		if err != nil {
			if errno.Of(err) != errno.EIO {
				return nil, err
			}
			return nil, errno.EINVAL
		}
		return r.bytesResult(out)
	})
	register("zlib", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		op, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		n, err1 := argInt(args, 1)
		level, err2 := argInt(args, 2)
		maxOut, err3 := argInt(args, 3)
		if err1 != nil || err2 != nil || err3 != nil || maxOut < 0 {
			return nil, errno.EINVAL
		}
		in, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		// gzip and deflate run on pako in JavaScript (zlib.js), the one
		// engine of their one-shot and streaming forms.
		if op != "brotliCompress" && op != "brotliDecompress" {
			return nil, errno.EINVAL
		}
		if len(in) > maxZlibInput {
			return nil, guestError("ERR_BUFFER_TOO_LARGE")
		}
		// The output is bounded before it is made: by what the guest
		// asked for and by what its memory limit has left.
		maxOut = min(maxOut, r.hostBudget())
		lgwin, _ := argInt(args, 4)
		compress := op == "brotliCompress"
		var out []byte
		run := func(stop *atomic.Bool) error {
			var berr error
			out, berr = brotliOp(compress, in, level, lgwin, maxOut, stop)
			return berr
		}
		// Brotli's higher qualities compress a few MB/s: an input
		// larger than the scratch buffer (a blob, so ours to hand to
		// another goroutine) is compressed beside the call, which gives
		// way to kill and time limit.
		if compress && n < 0 {
			err = r.heavy(run)
		} else {
			err = run(nil)
		}
		if err != nil {
			return nil, err
		}
		return r.bytesResult(out)
	})
	register("crc32", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		n, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		init, _ := argInt(args, 1)
		return r.num(int(crc32.Update(uint32(init), crc32.IEEETable, b))), nil
	})
}

var errTooLarge = guestError("ERR_BUFFER_TOO_LARGE")

func zlibError(code, msg string) error { return guestError(code + "\x00" + msg) }
