package ncrypto

import (
	"fmt"
	"hash"
	"sync/atomic"

	"github.com/secexec/secexec/kernel/errno"
)

// Runner runs fn, a computation that may take seconds of CPU, and waits
// for it; it returns fn's error, or its own when it stops waiting (the
// caller's process was killed or ran out of time), after setting stop
// for fn to see where it can stop early. Go code cannot be interrupted,
// so what fn cannot stop is bounded by its callers here (key sizes,
// scrypt's and PBKDF2's cost).
type Runner func(fn func(stop *atomic.Bool) error) error

// Bounds on one process's state.
const (
	// MaxInput bounds one byte operand.
	MaxInput = 1 << 30
	// MaxHashes bounds the live hash objects (a guest that never calls
	// digest() cannot grow Go memory without bound).
	MaxHashes = 4096
	// Operands is the number of operand slots (SetOperand).
	Operands = 4
	// Results is the number of extra result slots (TakeResult).
	Results = 2
)

// State is the native side of one process's crypto module: its live
// hashes, the operands and extra results of the current operation and a
// small cache of parsed keys. Ciphers, keys and signers keep their state
// with the caller (in JavaScript), so nothing here outlives an operation
// but the hashes and the bounded cache. A State is used by one goroutine
// at a time; its zero value is not ready, use NewState.
type State struct {
	// Heavy runs the long computations (large PBKDF2 and scrypt costs,
	// RSA key generation, large Diffie-Hellman moduli, decrypting keys
	// with a large PBKDF2 cost); nil runs them in the calling goroutine.
	Heavy Runner

	// in holds the byte operands of the next operation, out the extra
	// byte results of the last one.
	in  [Operands][]byte
	out [Results][]byte
	// kdf holds pbkdf2's password and salt (SetKDFInput).
	kdf [2][]byte

	hashes   map[int]hash.Hash
	nextHash int

	keys keyCache
}

// NewState returns an empty State whose long computations run on heavy.
func NewState(heavy Runner) *State {
	return &State{Heavy: heavy, hashes: map[int]hash.Hash{}, keys: keyCache{m: map[string]any{}}}
}

// SetOperand stashes b as operand i of the next operation, which takes
// it; s keeps b, so the caller must not reuse it.
func (s *State) SetOperand(i int, b []byte) error {
	if i < 0 || i >= Operands {
		return errno.EINVAL
	}
	if len(b) > MaxInput {
		return newError("ERR_OUT_OF_RANGE", fmt.Sprintf("crypto input larger than %d bytes", MaxInput))
	}
	s.in[i] = b
	return nil
}

// TakeResult returns and clears extra result i of the last operation.
func (s *State) TakeResult(i int) ([]byte, error) {
	if i < 0 || i >= Results {
		return nil, errno.EINVAL
	}
	b := s.out[i]
	s.out[i] = nil
	return b, nil
}

// take returns and clears operand i.
func (s *State) take(i int) []byte {
	b := s.in[i]
	s.in[i] = nil
	return b
}

// run runs fn on s.Heavy when heavy is set and there is one, else here.
func (s *State) run(heavy bool, fn func(stop *atomic.Bool) error) error {
	if heavy && s.Heavy != nil {
		return s.Heavy(fn)
	}
	return fn(nil)
}
