package main

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
