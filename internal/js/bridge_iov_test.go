package js

import (
	"reflect"
	"strings"
	"testing"
)

// The buffer lengths fs.js sends are checked, and more than IOV_MAX
// buffers move only the first IOV_MAX, as libuv does.
func TestIovLengths(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"", nil, false},
		{"3,0,10", []int{3, 0, 10}, false},
		{"3,-1", nil, true},
		{"x", nil, true},
		{strings.Repeat("1,", iovMax) + "x", func() []int {
			out := make([]int, iovMax)
			for i := range out {
				out[i] = 1
			}
			return out
		}(), false},
	} {
		got, err := iovLengths(tc.in)
		if (err != nil) != tc.bad || !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("iovLengths(%.20q) = %v, %v", tc.in, got, err)
		}
	}
	if got := splitIov([]byte("abcdef"), []int{2, 0, 3, 5}); len(got) != 4 || string(got[0]) != "ab" ||
		len(got[1]) != 0 || string(got[2]) != "cde" || string(got[3]) != "f" {
		t.Errorf("splitIov: %q", got)
	}
}
