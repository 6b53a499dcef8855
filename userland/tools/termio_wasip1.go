//go:build wasip1

package main

import (
	"encoding/binary"
	"syscall"
	"unsafe"
)

// A WASI module has no ioctl; secexec's host_tty extensions (see
// docs/architecture.md) stand in for TCGETS, TCSETS*, TIOCGWINSZ and
// TIOCSWINSZ on a descriptor that is a terminal. They return a WASI errno
// (ENOTTY when fd is not a terminal).

//go:wasmimport host_tty get_attr
func hostTTYGetAttr(fd uint32, buf unsafe.Pointer) uint32

//go:wasmimport host_tty set_attr
func hostTTYSetAttr(fd uint32, when uint32, buf unsafe.Pointer) uint32

//go:wasmimport host_tty get_size
func hostTTYGetSize(fd uint32, buf unsafe.Pointer) uint32

//go:wasmimport host_tty set_size
func hostTTYSetSize(fd uint32, buf unsafe.Pointer) uint32

func errnoErr(e uint32) error {
	if e == 0 {
		return nil
	}
	return syscall.Errno(e)
}

func termGetAttr(fd int) (termios, error) {
	b := make([]byte, termiosSize)
	if err := errnoErr(hostTTYGetAttr(uint32(fd), unsafe.Pointer(&b[0]))); err != nil {
		return termios{}, err
	}
	return unmarshalTermios(b), nil
}

// termSetAttr is tcsetattr(fd, when, t); when is TCSANOW, TCSADRAIN or
// TCSAFLUSH (0, 1, 2).
func termSetAttr(fd int, when int, t termios) error {
	b := t.marshal()
	return errnoErr(hostTTYSetAttr(uint32(fd), uint32(when), unsafe.Pointer(&b[0])))
}

func termSize(fd int) (rows, cols int, err error) {
	var b [8]byte
	if err := errnoErr(hostTTYGetSize(uint32(fd), unsafe.Pointer(&b[0]))); err != nil {
		return 0, 0, err
	}
	return int(binary.LittleEndian.Uint16(b[0:])), int(binary.LittleEndian.Uint16(b[2:])), nil
}

func termSetSize(fd, rows, cols int) error {
	var b [8]byte
	binary.LittleEndian.PutUint16(b[0:], uint16(rows))
	binary.LittleEndian.PutUint16(b[2:], uint16(cols))
	return errnoErr(hostTTYSetSize(uint32(fd), unsafe.Pointer(&b[0])))
}

// marshal lays t out as struct termios for get_attr and set_attr.
func (t *termios) marshal() []byte {
	b := make([]byte, termiosSize)
	binary.LittleEndian.PutUint32(b[0:], t.Iflag)
	binary.LittleEndian.PutUint32(b[4:], t.Oflag)
	binary.LittleEndian.PutUint32(b[8:], t.Cflag)
	binary.LittleEndian.PutUint32(b[12:], t.Lflag)
	b[16] = t.Line
	copy(b[17:], t.Cc[:])
	return b
}

// unmarshalTermios reads a struct termios written by get_attr.
func unmarshalTermios(b []byte) termios {
	var t termios
	t.Iflag = binary.LittleEndian.Uint32(b[0:])
	t.Oflag = binary.LittleEndian.Uint32(b[4:])
	t.Cflag = binary.LittleEndian.Uint32(b[8:])
	t.Lflag = binary.LittleEndian.Uint32(b[12:])
	t.Line = b[16]
	copy(t.Cc[:], b[17:termiosSize])
	return t
}
