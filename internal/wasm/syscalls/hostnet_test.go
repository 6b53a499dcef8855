package syscalls

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// net_connect tells a bad port (FAULT in the ABI) from other malformed
// addresses (INVAL) by the text after the last colon, cut at a NUL.
func TestBadPort(t *testing.T) {
	for text, want := range map[string]bool{
		"127.0.0.1:80":        false,
		"[::1]:65535":         false,
		"example.com:0":       false,
		"exa mple.com:80":     false,
		"127.0.0.1:80\x00pad": false,
		"unix:/tmp/s":         false,
		"unix-abstract:zz":    false,
		"127.0.0.1:65536":     true,
		"127.0.0.1:http":      true,
		"127.0.0.1:":          true,
		"127.0.0.1:123456":    true,
		"localhost":           true,
		"127.0\x00.0.1:80":    true,
		"[::1]":               true,
		"":                    true,
	} {
		if got := badPort(text); got != want {
			t.Errorf("badPort(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestTimevalNanos(t *testing.T) {
	tv := func(sec, usec int64) []byte {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint64(b, uint64(sec))
		binary.LittleEndian.PutUint64(b[8:], uint64(usec))
		return b
	}
	for _, c := range []struct {
		sec, usec int64
		want      int64
		e         Errno
	}{
		{0, 0, 0, ESUCCESS},
		{0, 200000, int64(200 * time.Millisecond), ESUCCESS},
		{3, 5, int64(3*time.Second + 5*time.Microsecond), ESUCCESS},
		{math.MaxInt64, 999999, math.MaxInt64, ESUCCESS},
		{9223372036, 0, 9223372036 * int64(time.Second), ESUCCESS},
		{9223372036, 999999, math.MaxInt64, ESUCCESS},
		{-1, 0, 0, EINVAL},
		{0, -1, 0, EINVAL},
		{0, 1000000, 0, EINVAL},
	} {
		got, e := timevalNanos(tv(c.sec, c.usec))
		if got != c.want || e != c.e {
			t.Errorf("timeval{%d, %d} = %d, %d; want %d, %d", c.sec, c.usec, got, e, c.want, c.e)
		}
	}
}
