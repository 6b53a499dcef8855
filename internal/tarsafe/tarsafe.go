// Package tarsafe holds the checks every tar reader of secexec applies to
// an entry before acting on it: a name that stays inside the directory
// being unpacked into, and no sparse entries (a few bytes on the wire
// that archive/tar expands into any number of zeros).
package tarsafe

import (
	"archive/tar"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrUnsafe is matched by every refusal of this package.
var ErrUnsafe = errors.New("tarsafe: unsafe tar entry")

// MaxName bounds an entry name.
const MaxName = 4096

// Name checks a tar entry name and returns it cleaned and relative
// ("" for the directory itself, "./" or "."). Absolute names, names that
// leave the directory (a ".." component anywhere), names holding NUL or a
// backslash, and empty or overlong names are refused: an archive cannot
// write outside the directory it is unpacked into. The check is
// filepath.IsLocal on the slash-separated name, plus the stricter rule
// that no component is "..", even one that would cancel out.
func Name(name string) (string, error) {
	if name == "" || len(name) > MaxName || strings.ContainsAny(name, "\x00\\") {
		return "", fmt.Errorf("%w: entry name %q", ErrUnsafe, name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", fmt.Errorf("%w: entry name %q leaves the directory", ErrUnsafe, name)
		}
	}
	trimmed := strings.TrimRight(name, "/")
	if trimmed == "" || trimmed == "." {
		if strings.HasPrefix(name, "/") {
			return "", fmt.Errorf("%w: entry name %q is absolute", ErrUnsafe, name)
		}
		return "", nil
	}
	if !filepath.IsLocal(filepath.FromSlash(trimmed)) {
		return "", fmt.Errorf("%w: entry name %q is not local", ErrUnsafe, name)
	}
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(trimmed)))
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// IsSparse reports whether h is a sparse entry, in the old GNU format
// (type 'S') or any of the PAX formats (GNU.sparse.* records): its data
// on the wire is a map of holes that archive/tar fills with zeros, so its
// expanded size is not bounded by the bytes received.
func IsSparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// Check applies Name and IsSparse to h and returns its cleaned name.
func Check(h *tar.Header) (string, error) {
	if IsSparse(h) {
		return "", fmt.Errorf("%w: entry %q is sparse (sparse entries are not accepted)", ErrUnsafe, h.Name)
	}
	return Name(h.Name)
}
