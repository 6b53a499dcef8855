// Package ncrypto is the native side of node:crypto and crypto.subtle
// (Node's name for its C++ crypto layer): hashes and HMAC, PBKDF2, scrypt
// and HKDF, the symmetric ciphers, key import, export and generation,
// signatures, RSA encryption, ECDH and finite-field Diffie-Hellman. It
// works on bytes and Go values only (no V8), so its parsers and cipher
// state machine are tested and fuzzed without cgo; internal/js adapts it
// to the bridge.
//
// Everything here is reachable by guest code with guest-chosen input:
// sizes and costs are bounded (see the Max constants), and failures are
// typed errors, *Error and *OpenSSLError for what Node reports as a
// JavaScript error with a code, or kernel/errno values for malformed
// requests, which the bootstrap JavaScript never makes.
package ncrypto

import (
	"errors"

	"github.com/secexec/secexec/kernel/errno"
)

// Error is a failure Node reports as a JavaScript error with Code (such
// as ERR_CRYPTO_INVALID_KEYLEN) and, when not empty, Message; otherwise
// the JavaScript side uses Node's message for the code.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "ncrypto: " + e.Code
	}
	return "ncrypto: " + e.Code + ": " + e.Message
}

func newError(code, msg string) error { return &Error{Code: code, Message: msg} }

// OpenSSLError is a failure as OpenSSL reports it and Node passes on:
// Code ERR_OSSL_<REASON> (empty where Node gives none), Message
// "error:<hex>:<library>::<reason>", and the library and reason strings
// Node puts on the error object.
type OpenSSLError struct {
	Code    string
	Message string
	Library string
	Reason  string
}

func (e *OpenSSLError) Error() string { return "ncrypto: " + e.Message }

func osslErr(hex, lib, reason, code string) error {
	return &OpenSSLError{Code: code, Message: "error:" + hex + ":" + lib + "::" + reason, Library: lib, Reason: reason}
}

// ErrTooManyHashes reports a process holding MaxHashes unfinished hash
// objects.
var ErrTooManyHashes = errors.New("ERR_CRYPTO_TOO_MANY_HASHES: too many unfinished hash objects")

var (
	errOSSLUnsupported = osslErr("1E08010C", "DECODER routines", "unsupported", "ERR_OSSL_UNSUPPORTED")
	errBadDecrypt      = osslErr("1C800064", "Provider routines", "bad decrypt", "ERR_OSSL_BAD_DECRYPT")
	errWrongFinalBlock = osslErr("1C80006B", "Provider routines", "wrong final block length", "ERR_OSSL_WRONG_FINAL_BLOCK_LENGTH")
	errKeyTypeOp       = osslErr("03000096", "digital envelope routines", "operation not supported for this keytype", "ERR_OSSL_EVP_OPERATION_NOT_SUPPORTED_FOR_THIS_KEYTYPE")
)

// isReported reports whether err is one of the errors a caller passes
// on as it is: a Node or OpenSSL error, or an errno.
func isReported(err error) bool {
	var e *Error
	var o *OpenSSLError
	return errors.As(err, &e) || errors.As(err, &o) || errno.Of(err) != 0
}
