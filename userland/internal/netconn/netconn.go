// Package netconn opens the TCP (and TLS) connections of secexec's curl and
// wget. Inside the sandbox (GOOS=wasip1) it uses the agentOS host_net
// imports: the host resolves names, applies the VM's network policy and,
// for TLS, runs the handshake and verifies the server against the host's
// trust store, so the guest speaks plaintext over an already secured
// socket. Elsewhere it uses the net and crypto/tls packages, which lets
// the command logic be tested on the host.
package netconn

import (
	"errors"
	"fmt"
	"syscall"
)

// Stage is the step of a connection that failed.
type Stage int

// The stages of Dial.
const (
	// Resolve is name resolution: the host could not be found.
	Resolve Stage = iota + 1
	// Connect is the TCP connection, refused, unreachable or denied.
	Connect
	// Timeout is a connection that did not complete in time.
	Timeout
	// TLS is a failed handshake other than verification.
	TLS
	// Verify is a server certificate that did not verify.
	Verify
)

// Error is a failed Dial.
type Error struct {
	Stage Stage
	// Denied is set when the VM's network policy refused the connection.
	Denied bool
	Err    error
}

func (e *Error) Error() string {
	switch e.Stage {
	case Resolve:
		return fmt.Sprintf("could not resolve host: %v", e.Err)
	case Timeout:
		return fmt.Sprintf("connection timed out: %v", e.Err)
	case TLS, Verify:
		return fmt.Sprintf("tls: %v", e.Err)
	}
	if e.Denied {
		return fmt.Sprintf("denied by the network policy: %v", e.Err)
	}
	return fmt.Sprintf("connect: %v", e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the connection timed out (net.Error style).
func (e *Error) Timeout() bool { return e.Stage == Timeout }

// Options configure Dial.
type Options struct {
	// TLS upgrades the connection, with ServerName for SNI and the
	// certificate check.
	TLS        bool
	ServerName string
	// Insecure accepts a server certificate that does not verify. Inside
	// the sandbox the host decides this from the program's environment
	// (NODE_TLS_REJECT_UNAUTHORIZED=0); the field is honoured where the
	// process makes its own handshakes.
	Insecure bool
}

// errDenied is the cause of a connection the policy refused.
var errDenied = errors.New("permission denied")

// classify turns a connect errno into an Error.
func classify(err error) *Error {
	var en syscall.Errno
	if errors.As(err, &en) {
		switch en {
		case syscall.ENOENT, syscall.EAGAIN:
			return &Error{Stage: Resolve, Err: err}
		case syscall.ETIMEDOUT:
			return &Error{Stage: Timeout, Err: err}
		case syscall.EACCES, syscall.EPERM:
			return &Error{Stage: Connect, Denied: true, Err: errDenied}
		}
	}
	return &Error{Stage: Connect, Err: err}
}
