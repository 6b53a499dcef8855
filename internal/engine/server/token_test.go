package server

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/secexec/secexec/internal/engine/proto"
)

// readToken takes exactly proto.TokenSize bytes followed by end of file
// from its descriptor, and closes it.
func TestReadToken(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"exact", bytes.Repeat([]byte{7}, proto.TokenSize), true},
		{"short", bytes.Repeat([]byte{7}, proto.TokenSize-1), false},
		{"long", bytes.Repeat([]byte{7}, proto.TokenSize+1), false},
		{"empty", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(tc.data); err != nil {
				t.Fatal(err)
			}
			_ = w.Close()
			// readToken owns the descriptor: hand it a duplicate.
			fd, err := dupFD(r)
			_ = r.Close()
			if err != nil {
				t.Fatal(err)
			}
			tok, err := readToken(fd)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadToken)) {
				t.Fatalf("readToken: %v", err)
			}
			if tc.ok && !bytes.Equal(tok, tc.data) {
				t.Fatalf("token %x", tok)
			}
			if f := os.NewFile(uintptr(fd), "closed"); f != nil {
				if _, err := f.Stat(); err == nil {
					t.Error("the token descriptor is still open")
				}
			}
		})
	}
}

// dupFD duplicates f's descriptor.
func dupFD(f *os.File) (int, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	err = c.Control(func(raw uintptr) { fd, derr = syscall.Dup(int(raw)) })
	if err != nil {
		return -1, err
	}
	return fd, derr
}
