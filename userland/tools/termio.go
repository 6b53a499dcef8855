package main

import "encoding/binary"

// termios is Linux's struct termios as the TCGETS ioctl fills it
// (asm-generic/termbits.h): four flag words, the line discipline and 19
// control characters. host_tty.get_attr and set_attr exchange it in this
// layout, 36 bytes, little-endian.
type termios struct {
	Iflag, Oflag, Cflag, Lflag uint32
	Line                       uint8
	Cc                         [nccs]uint8
}

const (
	nccs        = 19
	termiosSize = 36
)

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
