// Package sysmsg renders operating-system errors the way C programs print
// them with strerror(3) ("No such file or directory"), so the Go userland's
// diagnostics read exactly like GNU grep's and jq's. Only the errno text is
// used: Go's own wrapping (operation, path) never reaches the output.
package sysmsg

import (
	"errors"
	"io/fs"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Text returns the strerror-style message for err.
func Text(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if s := errno.Error(); s != "" {
			// Go's Linux table is strerror in lower case; its wasip1 table
			// is already capitalised.
			return capitalize(s)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	case errors.Is(err, fs.ErrExist):
		return "File exists"
	case errors.Is(err, fs.ErrInvalid):
		return "Invalid argument"
	case errors.Is(err, fs.ErrClosed):
		return "Bad file descriptor"
	}
	return "Input/output error"
}

func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
