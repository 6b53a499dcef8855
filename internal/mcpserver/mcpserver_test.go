package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/mcpserver"
	"github.com/secexec/secexec/kernel/policy"
)

// VMs run in engine processes: this test binary re-executed.
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	code := m.Run()
	secexec.Shutdown(context.Background())
	os.Exit(code)
}

// insideVM is what `secexec mcp` grants by default: everything inside
// the VM, listening included, and no network beyond it.
func insideVM() *policy.Policy {
	p := policy.DenyAll().AllowFS(policy.AllFSOps(), "/**").AllowExec("*", "/**")
	p.Net = append(p.Net, policy.NetRule{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*"}})
	return p
}

// client is one MCP client session on a server, through the SDK's own
// client over its in-memory transport.
type client struct {
	t  *testing.T
	cs *mcp.ClientSession

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	got      chan struct{}
}

func newServer(t *testing.T, cfg mcpserver.Config) *mcpserver.Server {
	t.Helper()
	if cfg.Base.Permissions == nil {
		cfg.Base.Permissions = insideVM()
	}
	srv := mcpserver.New(cfg)
	t.Cleanup(srv.Close)
	return srv
}

func connect(t *testing.T, srv *mcpserver.Server) *client {
	t.Helper()
	c := &client{t: t, got: make(chan struct{}, 1)}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	mc := mcp.NewClient(&mcp.Implementation{Name: "secexec-test", Version: "v0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			c.mu.Unlock()
			select {
			case c.got <- struct{}{}:
			default:
			}
		},
	})
	cs, err := mc.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return c
}

// call calls a tool and returns its result.
func (c *client) call(name string, args map[string]any, progressToken any) *mcp.CallToolResult {
	c.t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		p.SetProgressToken(progressToken)
	}
	res, err := c.cs.CallTool(c.t.Context(), p)
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result.
func (c *client) ok(name string, args map[string]any, out any) {
	c.t.Helper()
	res := c.call(name, args, nil)
	if res.IsError {
		c.t.Fatalf("%s %v: %s", name, args, resultText(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		c.t.Fatalf("%s: %v in %s", name, err, data)
	}
}

// fails calls a tool that must fail and returns its error text, which
// must hold each of want.
func (c *client) fails(name string, args map[string]any, want ...string) string {
	c.t.Helper()
	res := c.call(name, args, nil)
	msg := resultText(res)
	if !res.IsError {
		c.t.Fatalf("%s %v succeeded: %s", name, args, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			c.t.Errorf("%s %v: error %q does not say %q", name, args, msg, w)
		}
	}
	return msg
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func (c *client) newVM(args map[string]any) string {
	c.t.Helper()
	var out struct {
		VMID string `json:"vm_id"`
	}
	c.ok("vm_create", args, &out)
	if out.VMID == "" {
		c.t.Fatal("vm_create returned no vm_id")
	}
	return out.VMID
}

type execResult struct {
	ExitCode        int    `json:"exit_code"`
	Outcome         string `json:"outcome"`
	Reason          string `json:"reason"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutBase64    string `json:"stdout_base64"`
	StdoutTruncated bool   `json:"stdout_truncated"`
}

func (c *client) exec(args map[string]any) execResult {
	c.t.Helper()
	var r execResult
	c.ok("exec", args, &r)
	return r
}

func TestToolsListed(t *testing.T) {
	c := connect(t, newServer(t, mcpserver.Config{}))
	var names []string
	for tool, err := range c.cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s lacks a description or schema", tool.Name)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := []string{"exec", "file_list", "file_read", "file_write", "js_eval", "preview", "vm_close", "vm_create", "vm_list"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

// Every tool does its job in a real VM.
func TestTools(t *testing.T) {
	c := connect(t, newServer(t, mcpserver.Config{}))
	vm := c.newVM(map[string]any{"env": map[string]any{"GREETING": "hello"}})

	r := c.exec(map[string]any{"vm_id": vm, "command": "echo hi; echo $GREETING >&2; exit 3"})
	if r.Stdout != "hi\n" || r.Stderr != "hello\n" || r.ExitCode != 3 || r.Outcome != "failed" {
		t.Errorf("exec: %+v", r)
	}
	r = c.exec(map[string]any{"vm_id": vm, "argv": []string{"echo", "a | b"}})
	if r.Stdout != "a | b\n" || r.ExitCode != 0 || r.Outcome != "succeeded" {
		t.Errorf("exec argv: %+v", r)
	}
	r = c.exec(map[string]any{"vm_id": vm, "command": "wc -l", "stdin": "1\n2\n3\n"})
	if strings.TrimSpace(r.Stdout) != "3" {
		t.Errorf("exec stdin: %+v", r)
	}
	r = c.exec(map[string]any{"vm_id": vm, "command": `printf '\377\376'`})
	if raw, _ := base64.StdEncoding.DecodeString(r.StdoutBase64); !bytes.Equal(raw, []byte{0xff, 0xfe}) {
		t.Errorf("binary stdout: %+v", r)
	}

	var w struct {
		Path  string `json:"path"`
		Bytes int    `json:"bytes"`
	}
	c.ok("file_write", map[string]any{"vm_id": vm, "path": "notes/a.txt", "content": "line one\n", "mkdirs": true}, &w)
	if w.Path != "/workspace/notes/a.txt" || w.Bytes != 9 {
		t.Errorf("file_write: %+v", w)
	}
	r = c.exec(map[string]any{"vm_id": vm, "command": "cat /workspace/notes/a.txt"})
	if r.Stdout != "line one\n" {
		t.Errorf("the guest reads %q", r.Stdout)
	}
	bin := []byte{0, 1, 2, 0xff, 'x'}
	c.ok("file_write", map[string]any{"vm_id": vm, "path": "/workspace/bin", "content": base64.StdEncoding.EncodeToString(bin), "encoding": "base64"}, &w)

	type readOut struct {
		Path      string `json:"path"`
		Size      int64  `json:"size"`
		Content   string `json:"content"`
		Encoding  string `json:"encoding"`
		Truncated bool   `json:"truncated"`
	}
	var rd readOut
	c.ok("file_read", map[string]any{"vm_id": vm, "path": "/workspace/notes/a.txt"}, &rd)
	if rd.Content != "line one\n" || rd.Encoding != "text" || rd.Size != 9 || rd.Truncated {
		t.Errorf("file_read: %+v", rd)
	}
	c.ok("file_read", map[string]any{"vm_id": vm, "path": "/workspace/notes/a.txt", "offset": 5, "length": 3}, &rd)
	if rd.Content != "one" || !rd.Truncated {
		t.Errorf("file_read offset 5 length 3: %+v", rd)
	}
	c.ok("file_read", map[string]any{"vm_id": vm, "path": "/workspace/bin"}, &rd)
	if got, _ := base64.StdEncoding.DecodeString(rd.Content); rd.Encoding != "base64" || !bytes.Equal(got, bin) {
		t.Errorf("file_read of binary: %+v", rd)
	}

	var ls struct {
		Path    string `json:"path"`
		Entries []struct {
			Name string `json:"name"`
			Type string `json:"type"`
			Size int64  `json:"size"`
		} `json:"entries"`
	}
	c.ok("file_list", map[string]any{"vm_id": vm}, &ls)
	var seen []string
	for _, e := range ls.Entries {
		seen = append(seen, e.Name+":"+e.Type)
		if e.Name == "bin" && e.Size != int64(len(bin)) {
			t.Errorf("bin listed with size %d", e.Size)
		}
	}
	if ls.Path != "/workspace" || !slices.Contains(seen, "notes:dir") || !slices.Contains(seen, "bin:file") {
		t.Errorf("file_list: %s %v", ls.Path, seen)
	}

	var ev struct {
		Value any `json:"value"`
	}
	c.ok("js_eval", map[string]any{"vm_id": vm, "expression": "Promise.resolve({sum: 1 + 2, s: require('fs').readFileSync('/workspace/notes/a.txt', 'utf8')})"}, &ev)
	if m, ok := ev.Value.(map[string]any); !ok || m["sum"] != 3.0 || m["s"] != "line one\n" {
		t.Errorf("js_eval: %#v", ev.Value)
	}
	c.fails("js_eval", map[string]any{"vm_id": vm, "expression": "(() => { throw new Error('boom') })()"}, "boom")

	var list struct {
		VMs []struct {
			VMID string `json:"vm_id"`
		} `json:"vms"`
	}
	c.ok("vm_list", nil, &list)
	if len(list.VMs) != 1 || list.VMs[0].VMID != vm {
		t.Errorf("vm_list: %+v", list)
	}
	var closed struct {
		Closed bool `json:"closed"`
	}
	c.ok("vm_close", map[string]any{"vm_id": vm}, &closed)
	c.fails("exec", map[string]any{"vm_id": vm, "command": "true"}, "no such VM")
	c.fails("vm_close", map[string]any{"vm_id": vm}, "no such VM")
}

// exec streams stdout and stderr as progress notifications, in order
// and with increasing progress, when the request carries a token.
func TestExecProgress(t *testing.T) {
	c := connect(t, newServer(t, mcpserver.Config{}))
	vm := c.newVM(nil)
	res := c.call("exec", map[string]any{"vm_id": vm, "command": "for i in 1 2 3; do echo line$i; done; echo oops >&2"}, "tok-1")
	if res.IsError {
		t.Fatal(resultText(res))
	}
	want := map[string]string{"stdout": "line1\nline2\nline3\n", "stderr": "oops\n"}
	for {
		got := map[string]string{}
		last := 0.0
		c.mu.Lock()
		for _, p := range c.progress {
			if p.ProgressToken != "tok-1" {
				t.Fatalf("progress token %v", p.ProgressToken)
			}
			if p.Progress <= last {
				t.Fatalf("progress went from %v to %v", last, p.Progress)
			}
			last = p.Progress
			stream, _ := p.Meta["stream"].(string)
			got[stream] += p.Message
		}
		c.mu.Unlock()
		if got["stdout"] == want["stdout"] && got["stderr"] == want["stderr"] {
			break
		}
		select {
		case <-c.got:
		case <-t.Context().Done():
			t.Fatalf("progress carried %q, want %q", got, want)
		}
	}

	// Without a token, no notifications.
	c.mu.Lock()
	n := len(c.progress)
	c.mu.Unlock()
	c.exec(map[string]any{"vm_id": vm, "command": "echo quiet"})
	c.ok("vm_list", nil, &struct{}{}) // a round trip after the exec
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.progress) != n {
		t.Errorf("%d notifications without a progress token", len(c.progress)-n)
	}
}

// Each bound ends in a clear error or a reported truncation.
func TestBounds(t *testing.T) {
	srv := newServer(t, mcpserver.Config{
		MaxVMs: 3, MaxVMsPerSession: 2, MaxOutput: 1000, MaxFileBytes: 100, MaxInput: 200,
		MaxTimeout: 5000_000_000, // 5s
	})
	c := connect(t, srv)
	vm := c.newVM(nil)

	r := c.exec(map[string]any{"vm_id": vm, "command": "yes | head -c 100000; echo done >&2"})
	if len(r.Stdout) != 1000 || !r.StdoutTruncated || r.Stderr != "done\n" {
		t.Errorf("oversize output: %d bytes, truncated %v, stderr %q", len(r.Stdout), r.StdoutTruncated, r.Stderr)
	}
	r = c.exec(map[string]any{"vm_id": vm, "command": "sleep 30", "timeout_ms": 300})
	if r.Outcome != "timed_out" || r.ExitCode != 124 || r.Reason != "timeout" {
		t.Errorf("timeout: %+v", r)
	}
	c.fails("exec", map[string]any{"vm_id": vm, "command": "true", "timeout_ms": 6000}, "exceeds the server's maximum")
	c.fails("exec", map[string]any{"vm_id": vm, "command": "echo " + strings.Repeat("x", 300)}, "too large")
	c.fails("exec", map[string]any{"vm_id": vm}, "either command or argv")
	c.fails("exec", map[string]any{"vm_id": vm, "command": "true", "env": map[string]any{"": "x"}}, "not a valid variable")
	c.fails("js_eval", map[string]any{"vm_id": vm, "expression": "'x'.repeat(5000)"}, "too large")

	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/big", "content": strings.Repeat("x", 101)}, "too large")
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/big", "content": base64.StdEncoding.EncodeToString(make([]byte, 200)), "encoding": "base64"}, "too large")
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/x", "content": "!!", "encoding": "base64"}, "not base64")
	c.exec(map[string]any{"vm_id": vm, "command": "head -c 500 /dev/zero > /workspace/big"})
	var rd struct {
		Content   string `json:"content"`
		Truncated bool   `json:"truncated"`
	}
	c.ok("file_read", map[string]any{"vm_id": vm, "path": "/workspace/big", "encoding": "base64"}, &rd)
	if raw, _ := base64.StdEncoding.DecodeString(rd.Content); len(raw) != 100 || !rd.Truncated {
		t.Errorf("file_read of 500 bytes returned %d, truncated %v", len(raw), rd.Truncated)
	}
	c.fails("file_read", map[string]any{"vm_id": vm, "path": "/workspace/big", "length": 101}, "exceeds the server's maximum")
	c.fails("file_read", map[string]any{"vm_id": vm, "path": "/workspace/nope"}, "no such file")
	c.fails("file_read", map[string]any{"vm_id": vm, "path": "/workspace"}, "is a directory")
	c.fails("file_read", map[string]any{"vm_id": vm, "path": "/dev/zero"}, "invalid argument")
	c.fails("file_list", map[string]any{"vm_id": vm, "path": "/workspace/big"}, "not a directory")
	c.fails("preview", map[string]any{"vm_id": vm, "port": 8080}, "not available")

	// VM counts: per session, then per server.
	c.newVM(nil)
	c.fails("vm_create", nil, "too many VMs", "this session")
	c2 := connect(t, srv)
	c2.newVM(nil)
	c2.fails("vm_create", nil, "too many VMs", "the server")
	// Another session's VM is not there for this one.
	c2.fails("exec", map[string]any{"vm_id": vm, "command": "true"}, "no such VM")
	c2.fails("vm_close", map[string]any{"vm_id": vm}, "no such VM")

	// A session's VMs close when it ends.
	if err := c.cs.Close(); err != nil {
		t.Fatal(err)
	}
	for srv.VMs() != 1 {
		select {
		case <-t.Context().Done():
			t.Fatalf("%d VMs left after the session ended", srv.VMs())
		default:
			_ = c2.cs.Ping(t.Context(), nil)
		}
	}
	c2.newVM(nil)
}

// A client may narrow the operator's policy and limits, never widen them.
func TestPermissions(t *testing.T) {
	base := insideVM()
	base.DenyFS(policy.AllFSOps(), "/etc/secret/**")
	// The denied trees exist (memory mounts): the tools act as the
	// guest, whose open of a path under a missing directory says ENOENT
	// before any rule is asked.
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	mounts := []secexec.Mount{{Path: "/etc/secret", HostDir: secret}, {Path: "/workspace/private"}, {Path: "/workspace/ro"}}
	srv := newServer(t, mcpserver.Config{Base: secexec.Options{Permissions: base, Limits: secexec.Limits{FSBytes: 8 << 20}, Mounts: mounts}})
	c := connect(t, srv)
	c.fails("vm_create", map[string]any{"fs_bytes": 16 << 20}, "fs_bytes", "exceeds the server's maximum")
	c.fails("vm_create", map[string]any{"memory_bytes": 1 << 40}, "memory_bytes", "exceeds the server's maximum")
	c.fails("vm_create", map[string]any{"deny_paths": []string{"relative"}}, "not an absolute")
	c.fails("vm_create", map[string]any{"env": map[string]any{"A=B": "x"}}, "not a valid variable")

	vm := c.newVM(map[string]any{"deny_paths": []string{"/workspace/private"}, "read_only_paths": []string{"/workspace/ro"}, "fs_bytes": 1 << 20})
	// The operator's denial and the client's hold for the file tools...
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/private/a", "content": "x"}, "permission denied")
	c.fails("file_list", map[string]any{"vm_id": vm, "path": "/workspace/private"}, "permission denied")
	c.fails("file_read", map[string]any{"vm_id": vm, "path": "/etc/secret/key"}, "permission denied")
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/ro/f", "content": "y"}, "permission denied")
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/ro/f", "content": "y", "mkdirs": true}, "permission denied")
	c.fails("file_read", map[string]any{"vm_id": vm, "path": "/workspace/ro/f"}, "no such file")
	// ...through a symlink the guest made, too...
	c.exec(map[string]any{"vm_id": vm, "command": "ln -s /workspace/private /workspace/door; ln -s ../workspace/ro /tmp/ro2"})
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/workspace/door/a", "content": "x"}, "permission denied")
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/tmp/ro2/f", "content": "y"}, "permission denied")
	// ...and the file modes hold as for the guest user (/root is root's
	// 0700, /etc root's 0755), whatever the policy allows...
	c.fails("file_list", map[string]any{"vm_id": vm, "path": "/root"}, "permission denied")
	c.fails("file_write", map[string]any{"vm_id": vm, "path": "/etc/motd", "content": "x"}, "permission denied")
	// ...and for the VM's programs.
	for _, cmd := range []string{"mkdir /workspace/private/d", "mkdir /workspace/ro/d", "cat /etc/secret/key", "ls /root", "echo x > /etc/motd"} {
		r := c.exec(map[string]any{"vm_id": vm, "command": cmd})
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "ermission denied") {
			t.Errorf("%s in the guest: %+v", cmd, r)
		}
	}
	// fs_bytes narrowed to 1M: ENOSPC beyond it.
	r := c.exec(map[string]any{"vm_id": vm, "command": "head -c 2000000 /dev/zero > /workspace/fill"})
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "No space left") {
		t.Errorf("the narrowed fs_bytes did not hold: %+v", r)
	}

	// An operator who grants no programs: exec is refused whatever the client asks.
	srv2 := newServer(t, mcpserver.Config{Base: secexec.Options{Permissions: policy.DenyAll().AllowFS(policy.AllFSOps(), "/**")}})
	c2 := connect(t, srv2)
	vm2 := c2.newVM(nil)
	if r := c2.exec(map[string]any{"vm_id": vm2, "command": "echo hi"}); r.ExitCode == 0 || r.Stdout != "" {
		t.Errorf("exec without an exec rule: %+v", r)
	}
}

// A session runs at most MaxCallsPerSession tool calls at once.
func TestCallsInFlight(t *testing.T) {
	c := connect(t, newServer(t, mcpserver.Config{MaxCallsPerSession: 1}))
	vm := c.newVM(nil)
	busy := "too many calls"
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		for {
			// Until it gets the session's one call (the loop below
			// contends for it).
			res, _ := c.cs.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "exec",
				Arguments: map[string]any{"vm_id": vm, "command": "sleep 60"}})
			if res == nil || !res.IsError || !strings.Contains(resultText(res), busy) {
				done <- res
				return
			}
		}
	}()
	for {
		// Until the sleep holds the call: only it can make this one fail.
		res := c.call("file_list", map[string]any{"vm_id": vm}, nil)
		if res.IsError {
			if msg := resultText(res); !strings.Contains(msg, busy) {
				t.Fatalf("file_list: %s", msg)
			}
			break
		}
	}
	// vm_close is not a call on the VM: it ends the sleep.
	c.ok("vm_close", map[string]any{"vm_id": vm}, &struct{}{})
	if res := <-done; res == nil {
		t.Fatal("no result from the exec cut short by vm_close")
	}
}

// benchCaller connects an SDK client to a new server over the in-memory
// transport and returns a call that fails the benchmark on any error.
func benchCaller(b *testing.B) func(name string, args map[string]any) *mcp.CallToolResult {
	srv := mcpserver.New(mcpserver.Config{Base: secexec.Options{Permissions: insideVM()}})
	b.Cleanup(srv.Close)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(b.Context(), st, nil); err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return func(name string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		return res
	}
}

// The cost of a tool call over the SDK's in-memory transport, on top of
// the VM's own work: compare BenchmarkExecDirect.
func BenchmarkExecTool(b *testing.B) {
	call := benchCaller(b)
	vm := call("vm_create", map[string]any{}).StructuredContent.(map[string]any)["vm_id"]
	for b.Loop() {
		call("exec", map[string]any{"vm_id": vm, "command": "true"})
	}
}

// A file_read of a small file two directories down: the file tools'
// cost per call, path checks included.
func BenchmarkFileReadTool(b *testing.B) {
	call := benchCaller(b)
	vm := call("vm_create", map[string]any{}).StructuredContent.(map[string]any)["vm_id"]
	call("file_write", map[string]any{"vm_id": vm, "path": "/workspace/a/b/f", "content": "data", "mkdirs": true})
	for b.Loop() {
		call("file_read", map[string]any{"vm_id": vm, "path": "/workspace/a/b/f"})
	}
}

func BenchmarkExecDirect(b *testing.B) {
	vm, err := secexec.NewVM(b.Context(), secexec.Options{Permissions: insideVM()})
	if err != nil {
		b.Fatal(err)
	}
	defer vm.Close()
	for b.Loop() {
		if r, err := vm.Exec(b.Context(), "true", nil); err != nil || r.ExitCode != 0 {
			b.Fatal(err, r)
		}
	}
}
