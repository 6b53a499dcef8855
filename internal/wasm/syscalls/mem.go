package syscalls

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/secexec/secexec/kernel/vfs"
)

// Bounds on what one call may make the host do, whatever the guest asks.
const (
	// maxIovecs caps the iovec count of one read or write (Linux IOV_MAX).
	maxIovecs = 1024
	// maxIO caps the bytes one read or write call moves; a guest loops
	// for more, as it must on any short transfer.
	maxIO = 1 << 20
	// maxPath bounds a path argument (PATH_MAX).
	maxPath = vfs.PathMax
	// maxSubscriptions caps poll_oneoff's subscriptions.
	maxSubscriptions = 4096
)

// mem wraps a guest memory with bounds-checked accessors. Every accessor
// reports false for a range outside the memory, which callers turn into
// EFAULT; none of them panics.
type mem struct{ m api.Memory }

func (m mem) bytes(off, n uint32) ([]byte, bool) {
	if m.m == nil {
		return nil, false
	}
	return m.m.Read(off, n)
}

func (m mem) putU32(off, v uint32) bool {
	if m.m == nil {
		return false
	}
	return m.m.WriteUint32Le(off, v)
}

func (m mem) putU64(off uint32, v uint64) bool {
	if m.m == nil {
		return false
	}
	return m.m.WriteUint64Le(off, v)
}

// valid reports whether [off, off+n) lies in memory, so a function can
// check every output before it has side effects.
func (m mem) valid(off, n uint32) bool {
	_, ok := m.bytes(off, n)
	return ok
}

// str reads a string argument of at most max bytes.
// An unreadable range is EFAULT before an overlong one is ENAMETOOLONG, as
// Linux copies from user memory before it measures; the range is a view,
// so nothing is copied until both checks passed.
func (m mem) str(off, n uint32, max int) (string, Errno) {
	b, ok := m.bytes(off, n)
	if !ok {
		return "", EFAULT
	}
	if int64(n) > int64(max) {
		return "", ENAMETOOLONG
	}
	return string(b), ESUCCESS
}

// path reads a path argument: bounded, and without NUL bytes (which no C
// string can carry, so the guest cannot have meant them).
func (m mem) path(off, n uint32) (string, Errno) {
	p, e := m.str(off, n, maxPath-1)
	if e != ESUCCESS {
		return "", e
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", EINVAL
	}
	if p == "" {
		return "", ENOENT
	}
	return p, ESUCCESS
}

// putStrings writes strs in the C layout args_get and environ_get use: an
// array of pointers at ptrs and NUL-terminated strings at buf.
func (m mem) putStrings(strs []string, ptrs, buf uint32) Errno {
	size := uint32(0)
	for _, s := range strs {
		size += uint32(len(s)) + 1
	}
	pv, ok1 := m.bytes(ptrs, uint32(len(strs))*4)
	bv, ok2 := m.bytes(buf, size)
	if !ok1 || !ok2 {
		return EFAULT
	}
	off := uint32(0)
	for i, s := range strs {
		binary.LittleEndian.PutUint32(pv[i*4:], buf+off)
		copy(bv[off:], s)
		bv[off+uint32(len(s))] = 0
		off += uint32(len(s)) + 1
	}
	return ESUCCESS
}

// splitNul decodes the agentOS string list encoding: strings each ended
// by NUL; exactly one trailing empty element (after the last NUL) is
// dropped, so empty arguments survive.
func splitNul(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	parts := strings.Split(string(b), "\x00")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// envList keeps the entries of a decoded environment that are NAME=value
// with a non-empty name, as the agentOS ABI asks (§7.1.1).
func envList(in []string) []string {
	out := in[:0:0]
	for _, kv := range in {
		if i := strings.IndexByte(kv, '='); i > 0 && utf8.ValidString(kv[:i]) {
			out = append(out, kv)
		}
	}
	return out
}

// abort stops the calling guest now. A guest killed by a signal (its
// process context cancelled) must not run on until wazero next polls the
// context: a process that sent itself SIGKILL stops before the call
// returns, and a writer killed by SIGPIPE prints no error.
func abort() {
	panic(sys.NewExitError(sys.ExitCodeContextCanceled))
}

// checkKilled aborts the guest if its process has been killed.
func (s *State) checkKilled() {
	if s.P.Context().Err() != nil {
		abort()
	}
}
