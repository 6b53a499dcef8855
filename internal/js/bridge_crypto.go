package js

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"sync/atomic"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/node/brotli"
	"github.com/secexec/secexec/internal/node/ncrypto"
	"github.com/secexec/secexec/kernel/errno"
)

// The crypto module's bridge: thin adapters over internal/node/ncrypto,
// whose State (r.cs()) holds a process's hashes, the byte operands of
// the next operation (cryptoIn) and the extra results of the last one
// (cryptoOut). Keys travel as their canonical DER.

// bridgeHashNew(alg, key) starts a hash, or an HMAC with the bytes key
// (-1: none), and returns its id.
func bridgeHashNew(r *rt, a *callArgs) (*v8.Value, error) {
	var key []byte
	keyN := a.int(1)
	if keyN != -1 {
		var err error
		if key, err = r.bytesArg(keyN); err != nil {
			return nil, err
		}
	}
	return r.numOrError(r.cs().NewHash(a.str(0), key, keyN != -1))
}

func bridgeHashUpdate(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, nodeError(r.cs().HashUpdate(a.int(0), a.bytes(1)))
}

func bridgeHashDigest(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().HashDigest(a.int(0)))
}

func bridgeHashCopy(r *rt, a *callArgs) (*v8.Value, error) {
	return r.numOrError(r.cs().HashCopy(a.int(0)))
}

// bridgeKDFInput(slot, data) stashes pbkdf2's password (0) or salt (1).
func bridgeKDFInput(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, nodeError(r.cs().SetKDFInput(a.int(0), a.bytes(1)))
}

func bridgePBKDF2(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().PBKDF2(a.int(0), a.int(1), a.str(2)))
}

// bridgeScrypt(N, r, p, maxmem, keyLen): password and salt in operands 0
// and 1; scrypt's memory is bounded by the process's memory limit too.
func bridgeScrypt(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().Scrypt(a.int(0), a.int(1), a.int(2), a.int(3), a.int(4), int64(min(r.extLimit, math.MaxInt64))))
}

// bridgeHKDF(digest, keyLen): key, salt and info in operands 0 to 2.
func bridgeHKDF(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().HKDF(a.str(0), a.int(1)))
}

// bridgeCipherInfo describes a cipher for JavaScript: [mode, keyLen,
// ivLen, blockSize] as JSON, or throws ERR_CRYPTO_UNKNOWN_CIPHER.
func bridgeCipherInfo(r *rt, a *callArgs) (*v8.Value, error) {
	mode, keyLen, ivLen, blockSize, err := ncrypto.CipherInfo(a.str(0))
	if err != nil {
		return nil, nodeError(err)
	}
	return r.jsonResult([]any{mode, keyLen, ivLen, blockSize})
}

// bridgeCipherInit(name, decrypt, keyLen, keyAndIV) returns the cipher's
// first state.
func bridgeCipherInit(r *rt, a *callArgs) (*v8.Value, error) {
	keyLen, in := a.int(2), a.bytes(3)
	if keyLen < 0 || keyLen > len(in) {
		return nil, errno.EINVAL
	}
	return r.bytesOrError(ncrypto.CipherInit(a.str(0), a.bool(1), in[:keyLen], in[keyLen:]))
}

// bridgeCipherUpdate(name, decrypt, autoPadding, final, keyLen, stateLen,
// keyStateData): key, state and input, one after the other (one bridge
// call per update). It returns the new state's length (one byte), the
// state and the output.
func bridgeCipherUpdate(r *rt, a *callArgs) (*v8.Value, error) {
	keyLen, stLen, in := a.int(4), a.int(5), a.bytes(6)
	if keyLen < 0 || stLen < 0 || keyLen+stLen > len(in) {
		return nil, errno.EINVAL
	}
	key, st, data := in[:keyLen], in[keyLen:keyLen+stLen], in[keyLen+stLen:]
	ns, out, err := ncrypto.CipherUpdate(a.str(0), a.bool(1), a.bool(2), a.bool(3), key, st, data)
	if err != nil {
		return nil, nodeError(err)
	}
	res := make([]byte, 0, 1+len(ns)+len(out))
	res = append(append(append(res, byte(len(ns))), ns...), out...)
	return r.bytesResult(res)
}

// bridgeAEADTag(name): key, IV, AAD and plaintext in operands 0-3.
func bridgeAEADTag(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().AEADTag(a.str(0)))
}

// bridgeKeyImport(kind, format, type, hasPassphrase): the material in
// operand 0, the passphrase in 1. It returns the key's description as
// JSON; its canonical DER is result 0.
func bridgeKeyImport(r *rt, a *callArgs) (*v8.Value, error) {
	return r.keyInfoResult(r.cs().ImportKey(a.str(0), a.str(1), a.str(2), a.bool(3)))
}

// bridgeKeyPublic: the public key of the DER in operand 0, as keyImport.
func bridgeKeyPublic(r *rt, a *callArgs) (*v8.Value, error) {
	return r.keyInfoResult(r.cs().PublicKey())
}

// bridgeKeyExport(format, type, cipher): the key's DER in operand 0, the
// passphrase in 1; an empty or absent cipher is not encrypted.
func bridgeKeyExport(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().ExportKey(a.str(0), a.str(1), a.str(2)))
}

// bridgeKeyGenerate(kind): Node's options as JSON in operand 0. It
// returns the private key's description; the DERs are results 0 and 1.
func bridgeKeyGenerate(r *rt, a *callArgs) (*v8.Value, error) {
	return r.keyInfoResult(r.cs().GenerateKey(a.str(0)))
}

func (r *rt) keyInfoResult(info ncrypto.KeyInfo, err error) (*v8.Value, error) {
	if err != nil {
		return nil, nodeError(err)
	}
	return r.jsonResult(info)
}

func (r *rt) jsonResult(v any) (*v8.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("js: crypto result: %w", err)
	}
	return r.string(string(b))
}

// signOptions are the arguments of signDigest and verifyDigest: digest,
// padding, saltLength (null: none) and p1363.
func signOptions(a *callArgs) ncrypto.SignOptions {
	return ncrypto.SignOptions{Hash: a.str(0), Padding: a.int(1), SaltLength: a.int(2), HasSaltLength: a.has(2), P1363: a.bool(3)}
}

// bridgeSignDigest: the key's DER in operand 0, the digest in 1.
func bridgeSignDigest(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().SignDigest(signOptions(a)))
}

// bridgeVerifyDigest: as signDigest, with the signature in operand 2.
func bridgeVerifyDigest(r *rt, a *callArgs) (*v8.Value, error) {
	ok, err := r.cs().VerifyDigest(signOptions(a))
	if err != nil {
		return nil, nodeError(err)
	}
	return r.boolean(ok), nil
}

// bridgeRSACrypt(op, padding, digest): the key's DER, the data and the
// OAEP label in operands 0 to 2.
func bridgeRSACrypt(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().RSACrypt(a.str(0), a.int(1), a.str(2)))
}

// bridgeECDHKeys(curve, generate) returns the public point (uncompressed)
// of the private key in operand 0, or of a new one; the private key is
// result 0.
func bridgeECDHKeys(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().ECDHKeys(a.str(0), a.bool(1)))
}

// bridgeECDHCompute(curve): the private key and the peer's point in
// operands 0 and 1.
func bridgeECDHCompute(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().ECDHCompute(a.str(0)))
}

// bridgeECDHConvert(curve, format) re-encodes the public point in
// operand 0: format "compressed", "uncompressed" or "hybrid".
func bridgeECDHConvert(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().ECDHConvert(a.str(0), a.str(1)))
}

// bridgeDiffieHellman: the private and the peer's key DERs in operands 0
// and 1.
func bridgeDiffieHellman(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().DiffieHellman())
}

func bridgeDHGroup(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(ncrypto.DHGroup(a.str(0)))
}

// bridgeDHCheck: p and g in operands 0 and 1; it returns verifyError.
func bridgeDHCheck(r *rt, a *callArgs) (*v8.Value, error) {
	return r.numOrError(r.cs().DHCheck())
}

// bridgeDHGenPrime(bits, generator) returns a new safe prime.
func bridgeDHGenPrime(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().DHGenPrime(a.int(0), a.int(1)))
}

// bridgeDHModExp: base, exponent and modulus in operands 0 to 2; it
// returns base^exponent mod modulus, unpadded.
func bridgeDHModExp(r *rt, a *callArgs) (*v8.Value, error) {
	return r.bytesOrError(r.cs().DHModExp())
}

// bridgeZlib(op, data, quality, maxOutputLength, lgwin) runs a one-shot
// Brotli operation (brotliCompress, brotliDecompress); gzip and deflate
// run on pako in JavaScript (zlib.js), the one engine of their one-shot
// and streaming forms.
func bridgeZlib(r *rt, a *callArgs) (*v8.Value, error) {
	op, in, quality, maxOut := a.str(0), a.bytes(1), a.int(2), a.int(3)
	if maxOut < 0 || (op != "brotliCompress" && op != "brotliDecompress") {
		return nil, errno.EINVAL
	}
	// The output is bounded before it is made: by what the guest asked
	// for and by what its memory limit has left.
	maxOut = min(maxOut, r.hostBudget())
	if op == "brotliDecompress" {
		return r.bytesOrError(brotli.Decompress(in, maxOut))
	}
	// lgwin comes from a guest's options as Math.trunc(Number(v)): what
	// is not a finite number is the default.
	lgwin := floatToInt(a.float(4))
	var out []byte
	run := func(stop *atomic.Bool) error {
		var err error
		out, err = brotli.Compress(in, quality, lgwin, maxOut, stop)
		return err
	}
	// Brotli's higher qualities compress a few MB/s: an input larger
	// than the scratch buffer (a blob, so ours to hand to another
	// goroutine) is compressed beside the call, which gives way to kill
	// and time limit.
	var err error
	if r.ownsBytes(in) {
		err = r.heavy(run)
	} else {
		err = run(nil)
	}
	return r.bytesOrError(out, err)
}

// floatToInt is f as an int when it is a finite number within ±2^53,
// else 0.
func floatToInt(f float64) int {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < -(1<<53) || f > 1<<53 {
		return 0
	}
	return int(f)
}

// bridgeCRC32(data, value) continues the CRC-32 value (0 when it is not
// a number) over data.
func bridgeCRC32(r *rt, a *callArgs) (*v8.Value, error) {
	return r.num(int(crc32.Update(uint32(floatToInt(a.float(1))), crc32.IEEETable, a.bytes(0)))), nil
}
