package proto

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the decoder, as a hostile peer
// would: it must return an error or a frame, never panic, and whatever it
// accepts must encode back to something that decodes to the same frame.
func FuzzDecode(f *testing.F) {
	for _, s := range samples() {
		b, err := Append(nil, s.Type, s.ID, s.Body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if fr, err := Decode(data); err == nil {
			checkFrame(t, fr)
		}
		// The same bytes as a stream of frames.
		r := NewReader(bytes.NewReader(data))
		for range 64 {
			fr, err := r.Read()
			if err != nil {
				break
			}
			checkFrame(t, fr)
		}
	})
}

func checkFrame(t *testing.T, fr Frame) {
	t.Helper()
	b, err := Append(nil, fr.Type, fr.ID, fr.Body)
	if err != nil {
		t.Fatalf("re-encode %s: %v", fr.Type, err)
	}
	again, err := Decode(b)
	if err != nil {
		t.Fatalf("decode of re-encoded %s: %v", fr.Type, err)
	}
	// Empty and absent fields decode alike (nil vs empty slices), so
	// compare encodings: encoding what was decoded must be a fixed point.
	b2, err := Append(nil, again.Type, again.ID, again.Body)
	if err != nil || !bytes.Equal(b, b2) || again.Type != fr.Type || again.ID != fr.ID ||
		reflect.TypeOf(again.Body) != reflect.TypeOf(fr.Body) {
		t.Fatalf("%s changed in a round trip:\n%#v\n%#v", fr.Type, fr.Body, again.Body)
	}
	// Errors carried by the frame must rebuild without panicking.
	switch b := fr.Body.(type) {
	case *Response:
		if b.Err != nil {
			_ = b.Err.Err().Error()
		}
	case *Fatal:
		_ = b.Err.Err().Error()
	case *Close:
		if b.Err != nil {
			_ = b.Err.Err().Error()
		}
	}
}
