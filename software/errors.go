package software

import (
	"errors"
	"strings"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrUnknownPackage: the name is not in the store's pinned set.
	ErrUnknownPackage = errors.New("software: unknown package")
	// ErrInvalidPin: a Pin has a malformed name, version or integrity.
	ErrInvalidPin = errors.New("software: invalid pin")
	// ErrFetch: running npm failed (see *FetchError).
	ErrFetch = errors.New("software: fetch failed")
	// ErrIntegrity: a tarball does not match its pinned hash (see
	// *IntegrityError). Nothing from it was used.
	ErrIntegrity = errors.New("software: integrity mismatch")
	// ErrBadArchive: a verified tarball is unusable: no package.aospkg, a
	// duplicate or non-regular one, an unsafe member name, or too large.
	ErrBadArchive = errors.New("software: bad package tarball")
	// ErrBadPackage: the .aospkg container is malformed or its manifest
	// names commands it does not contain; the cause is wrapped too.
	ErrBadPackage = errors.New("software: bad package")
	// ErrCorrupt: cached bytes no longer match the fingerprint recorded at
	// install time.
	ErrCorrupt = errors.New("software: cache corrupt")
	// ErrInvalidName: a command name is not a single path element.
	ErrInvalidName = errors.New("software: invalid command name")
	// ErrNotWasm: registered bytes do not start with the WebAssembly magic.
	ErrNotWasm = errors.New("software: not a WebAssembly module")
	// ErrNotFound: no command or module with that name or fingerprint.
	ErrNotFound = errors.New("software: not found")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("software: store closed")
)

// FetchError reports a failed `npm pack`.
type FetchError struct {
	Spec   string // NAME@VERSION
	Err    error  // from os/exec or the JSON decoder
	Stderr string // the tail of npm's stderr, if any

	summarized bool // Err already carries npm's own summary
}

// Error includes npm's error summary, or else the last lines it printed.
func (e *FetchError) Error() string {
	s := "software: npm pack " + e.Spec + ": " + e.Err.Error()
	if msg := strings.TrimSpace(e.Stderr); msg != "" && !e.summarized {
		s += ": " + msg
	}
	return s
}

// Unwrap matches ErrFetch and the underlying cause (exec.ErrNotFound when
// npm is missing, context.Canceled, ...).
func (e *FetchError) Unwrap() []error { return []error{ErrFetch, e.Err} }

// IntegrityError reports a tarball whose hash differs from its pin.
type IntegrityError struct {
	Spec string // NAME@VERSION
	Want string // pinned SRI string
	Got  string // SRI string of the bytes received
}

// Error names both hashes.
func (e *IntegrityError) Error() string {
	return "software: " + e.Spec + ": integrity mismatch: want " + e.Want + ", got " + e.Got
}

// Unwrap returns ErrIntegrity.
func (e *IntegrityError) Unwrap() error { return ErrIntegrity }
