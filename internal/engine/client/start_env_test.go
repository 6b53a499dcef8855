package client

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The engine's V8 warm pool capacity reaches it as
// SECEXEC_V8_WARM_ISOLATES: Options.WarmIsolates when set (negative
// disables, "0"), else this process's own value, passed through.
func TestEngineEnvWarmIsolates(t *testing.T) {
	cases := []struct {
		name   string
		parent string // "" leaves the variable unset
		opt    int
		want   string // "" wants no such variable
	}{
		{"unset", "", 0, ""},
		{"passedThrough", "5", 0, "5"},
		{"option", "", 3, "3"},
		{"optionWins", "5", 3, "3"},
		{"negativeDisables", "5", -1, "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(warmEnv, c.parent) // restored after the case
			if c.parent == "" {
				os.Unsetenv(warmEnv)
			}
			var got, want []string
			for _, kv := range engineEnv("token", c.opt) {
				if v, ok := strings.CutPrefix(kv, warmEnv+"="); ok {
					got = append(got, v)
				}
			}
			if c.want != "" {
				want = []string{c.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("engine env has %s=%q, want %q", warmEnv, got, want)
			}
		})
	}
}
