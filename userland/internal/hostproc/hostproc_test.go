package hostproc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
)

// The packed layout is what the host's decoder reads (agentOS ABI §7.1.1):
// 24-byte little-endian header, then the path with no padding.
func TestEncodeActions(t *testing.T) {
	b := encodeActions([]Action{{Op: Dup2, FD: 1, Src: 7}, {Op: Open, FD: 0, Flag: 0, Mode: 0o644, Path: "/dev/null"}, {Op: Close, FD: -1}})
	if len(b) != 24+24+len("/dev/null")+24 {
		t.Fatalf("length %d", len(b))
	}
	u := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	if u(0) != 2 || u(4) != 1 || u(8) != 7 || u(20) != 0 {
		t.Fatalf("dup2 record % x", b[:24])
	}
	if u(24) != 3 || u(40) != 0o644 || u(44) != 9 || !bytes.Equal(b[48:57], []byte("/dev/null")) {
		t.Fatalf("open record % x", b[24:57])
	}
	if u(57) != 1 || int32(u(61)) != -1 {
		t.Fatalf("close record % x", b[57:])
	}
}

func TestEncodeListRejectsNUL(t *testing.T) {
	b, err := encodeList([]string{"a", "", "bc"})
	if err != nil || string(b) != "a\x00\x00bc\x00" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := encodeList([]string{"a\x00b"}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("NUL in argument: %v", err)
	}
}

func TestExitCode(t *testing.T) {
	if (Status{Code: 3}).ExitCode() != 3 || (Status{Signal: 9}).ExitCode() != 137 {
		t.Fatal("exit codes")
	}
}
