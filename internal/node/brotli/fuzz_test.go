package brotli

import "testing"

// FuzzBrotliDecompress decodes arbitrary bytes with a small output bound.
func FuzzBrotliDecompress(f *testing.F) {
	for _, s := range []string{"", "garbage", "\x1b\xaf\x04\xf8\x8d\x94n\xdeDU\x86\x96 lo5\x8bc\xb5@\x06T\xdb\x0b\x00", "\x0b\x02\x80hello\x03"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Decompress(in, 1<<16)
		if err == nil && len(out) > 1<<16 {
			t.Fatalf("output %d past the bound", len(out))
		}
	})
}
