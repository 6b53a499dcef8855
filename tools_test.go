package secexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// testTools are host tools with every kind of behaviour a guest may meet.
func testTools(calls *atomic.Int64, pids *sync.Map) map[string]secexec.Tool {
	return map[string]secexec.Tool{
		"echo": func(_ context.Context, call secexec.ToolCall) (json.RawMessage, error) {
			calls.Add(1)
			if pids != nil {
				pids.Store(call.Pid, true)
			}
			return json.RawMessage(fmt.Sprintf(`{"name":%q,"args":%s,"pid":%d}`, call.Name, call.Args, call.Pid)), nil
		},
		"secret": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			calls.Add(1)
			return json.RawMessage(`"leaked"`), nil
		},
		"fail": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			return nil, errors.New("disk on fire")
		},
		"typed": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			return nil, &secexec.ToolError{Code: secexec.ToolDenied, Tool: "typed", Message: "not for you"}
		},
		"huge": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			return json.RawMessage(`"` + strings.Repeat("x", 3<<20) + `"`), nil
		},
		"badjson": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			return json.RawMessage(`{not json`), nil
		},
		"hang": func(ctx context.Context, _ secexec.ToolCall) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
		"deaf": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			time.Sleep(2 * time.Second) // ignores its context
			return json.RawMessage(`1`), nil
		},
		"panic": func(context.Context, secexec.ToolCall) (json.RawMessage, error) {
			panic("tool bug")
		},
	}
}

// Guests call host tools from node and from the shell; each call is
// permission-checked, bounded and answered with a typed error.
func TestToolsHostile(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		var calls atomic.Int64
		opts := secexec.Options{
			Permissions: secexec.AllowAll().DenyTool("secret"),
			Tools:       testTools(&calls, nil),
		}
		opts.Limits.ToolTimeout = 300 * time.Millisecond
		vm := newVM(t, opts)
		c := newContext(t, vm, nil)
		evalString(t, c, "const tools = require('secexec:tools'); async function code(p) { try { await p; return 'ok' } catch (e) { return e.code + ': ' + e.message } }")

		got := evalString(t, c, "await tools.call('echo', {a: [1, 'two']})")
		var echo struct {
			Name string
			Args map[string]any
			Pid  int
		}
		if err := json.Unmarshal([]byte(got), &echo); err != nil || echo.Name != "echo" || echo.Pid != c.PID() || fmt.Sprint(echo.Args["a"]) != "[1 two]" {
			t.Fatalf("echo: %s %v", got, err)
		}
		if got := evalString(t, c, "tools.list()"); got != `["badjson","deaf","echo","fail","hang","huge","panic","typed"]` {
			t.Fatalf("list: %s", got)
		}
		before := calls.Load()
		for expr, want := range map[string]string{
			"tools.call('secret')":                                    "ERR_TOOL_DENIED",
			"tools.call('nope', 1)":                                   "ERR_TOOL_NOT_FOUND",
			"tools.call('echo', 'x'.repeat(100 * 2**20))":             "ERR_TOOL_TOO_LARGE",
			"tools.call('echo', {s: 'é'.repeat(600000)})":             "ERR_TOOL_TOO_LARGE",
			"tools.call('huge')":                                      "ERR_TOOL_TOO_LARGE",
			"tools.call('fail')":                                      "ERR_TOOL_FAILED: tool fail: disk on fire",
			"tools.call('typed')":                                     "ERR_TOOL_DENIED: tool typed: not for you",
			"tools.call('badjson')":                                   "ERR_TOOL_FAILED",
			"tools.call('hang')":                                      "ERR_TOOL_TIMEOUT",
			"tools.call('deaf')":                                      "ERR_TOOL_TIMEOUT",
			"tools.call('panic')":                                     "ERR_TOOL_FAILED: tool panic: the tool panicked: tool bug",
			"tools.call('e\\u0000cho')":                               "ERR_TOOL_INVALID",
			"tools.call('x'.repeat(300))":                             "ERR_TOOL_INVALID",
			"tools.call('echo', {toJSON() { throw new Error('j') }})": "ok-or-throw",
		} {
			got := evalString(t, c, "code("+expr+")")
			if want == "ok-or-throw" {
				if !strings.Contains(got, "j") {
					t.Errorf("%s: %s", expr, got)
				}
				continue
			}
			if !strings.HasPrefix(got, `"`+want) {
				t.Errorf("%s: %s, want %s", expr, got, want)
			}
		}
		if n := calls.Load() - before; n != 0 {
			t.Fatalf("%d refused calls reached a tool", n)
		}
		// The engine and the client survived the panic and the timeouts.
		if got := evalString(t, c, "(await tools.call('echo', 7)).args"); got != "7" {
			t.Fatalf("after the hostile calls: %s", got)
		}

		// The shell command: argument, stdin, errors on stderr.
		for _, tc := range []struct {
			cmd, out, errPrefix string
			code                int
		}{
			{`tool echo '[1,2]'`, `"args":[1,2]`, "", 0},
			{`echo '{"k":true}' | tool echo`, `"args":{"k":true}`, "", 0},
			{`tool secret`, "", "tool: ERR_TOOL_DENIED", 1},
			{`tool nope 1`, "", "tool: ERR_TOOL_NOT_FOUND", 1},
			{`tool echo '{bad'`, "", "tool: ERR_TOOL_INVALID", 1},
			{`tool hang`, "", "tool: ERR_TOOL_TIMEOUT", 1},
			{`tool panic`, "", "tool: ERR_TOOL_FAILED", 1},
			{`head -c 104857600 /dev/zero | tool echo`, "", "tool: ERR_TOOL_TOO_LARGE", 1},
			{`tool`, "", "usage: tool", 2},
			{`tool --list`, "badjson\ndeaf\necho\nfail\nhang\nhuge\npanic\ntyped\n", "", 0},
		} {
			r, err := vm.Exec(ctx, tc.cmd, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != tc.code || !strings.Contains(string(r.Stdout), tc.out) || !strings.HasPrefix(string(r.Stderr), tc.errPrefix) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.cmd, r.ExitCode, r.Stdout, r.Stderr)
			}
		}
	})
}

// Many processes call tools at once; every call is answered, with the
// caller's own pid.
func TestToolsConcurrent(t *testing.T) {
	eachTransport(t, func(t *testing.T, newVM func(*testing.T, secexec.Options) *secexec.VM) {
		ctx := context.Background()
		var calls atomic.Int64
		var pids sync.Map
		vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll(), Tools: testTools(&calls, &pids)})
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := vm.JS().Evaluate(ctx, `Promise.all(Array.from({length: 25}, (_, i) => require('secexec:tools').call('echo', i))).then((rs) => rs.map((r) => r.args).reduce((a, b) => a + b))`, nil)
				if err != nil || string(r) != "300" {
					t.Errorf("node: %s %v", r, err)
				}
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := vm.Exec(ctx, "tool echo 1", nil)
				if err != nil || r.ExitCode != 0 {
					t.Errorf("shell: %v %+v", err, r)
				}
			}()
		}
		wg.Wait()
		if n := calls.Load(); n != 8*25+8 {
			t.Fatalf("%d calls", n)
		}
		n := 0
		pids.Range(func(any, any) bool { n++; return true })
		if n != 16 {
			t.Fatalf("calls came from %d pids, want 16", n)
		}
	})
}

// Deny by default: without a tool rule no tool is callable, or listed.
func TestToolsDenyByDefault(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	p := secexec.DenyAll().AllowExec("node", "tool", "/usr/bin/*")
	vm := newTestProgramsVM(t, secexec.Options{Permissions: p, Tools: testTools(&calls, nil), Engine: secexec.EngineInProcess})
	v, err := vm.JS().Evaluate(ctx, `require('secexec:tools').call('echo').then(() => 'called', (e) => e.code + ' ' + require('secexec:tools').list().length)`, nil)
	if err != nil || string(v) != `"ERR_TOOL_DENIED 0"` {
		t.Fatalf("%s %v", v, err)
	}
	r, err := vm.Exec(ctx, "tool echo 1", nil)
	if err != nil || r.ExitCode != 1 || !strings.HasPrefix(string(r.Stderr), "tool: ERR_TOOL_DENIED") {
		t.Fatalf("%v %+v", err, r)
	}
	if calls.Load() != 0 {
		t.Fatal("a denied call reached the tool")
	}
}
