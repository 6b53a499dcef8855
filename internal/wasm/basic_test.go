package wasm_test

import (
	"context"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
)

func TestShellEcho(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for _, tc := range []struct {
		argv []string
		out  string
		code int
	}{
		{[]string{"true"}, "", 0},
		{[]string{"false"}, "", 1},
		{[]string{"echo", "hi"}, "hi\n", 0},
		{[]string{"sh", "-c", "true"}, "", 0},
		{[]string{"sh", "-c", "echo hi"}, "hi\n", 0},
	} {
		r := v.exec(ctx, tc.argv, runOpts{})
		if string(r.stdout) != tc.out || r.code != tc.code {
			t.Errorf("%q: stdout %q stderr %q code %d; want %q, %d", tc.argv, r.stdout, r.stderr, r.code, tc.out, tc.code)
		}
	}
}
