package api_test

import (
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/api"
)

// POST /v1/vms takes the VM's clock policy ("clock"; "real_time" is the
// older spelling of "real"); an unknown policy, or real_time with another
// one, is a 400.
func TestCreateVMClock(t *testing.T) {
	s := newServer(t, api.Config{})
	for _, body := range []map[string]any{
		{"clock": "fast"},
		{"clock": 1},
		{"clock": "frozen", "real_time": true},
	} {
		if r := s.do(alice, "POST", "/v1/vms", body); r.status != 400 || r.errCode(t) != "bad_request" {
			t.Errorf("%v: %d %s", body, r.status, r.body)
		}
	}
	const probe = `const a = Date.now(), p = performance.now(); let i = 0; while (i++ < 1e6); const end = Date.now() + 20; let fine = false; while (Date.now() < end && i++ < 2e7) if (performance.now() % 1) fine = true; console.log(Date.now() === a, fine)`
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{}, "false false"},
		{map[string]any{"clock": "coarse"}, "false false"},
		{map[string]any{"clock": "real"}, "false true"},
		{map[string]any{"real_time": true}, "false true"},
		{map[string]any{"clock": "frozen"}, "true false"},
	} {
		id := s.newVM(alice, c.body)
		_, res := s.exec(alice, id, map[string]any{"argv": []string{"node", "-e", probe}})
		if got := strings.TrimSpace(string(res.Stdout)); got != c.want {
			t.Errorf("%v: %q (want %q), stderr %q", c.body, got, c.want, res.Stderr)
		}
	}
}
