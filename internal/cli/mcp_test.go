package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec/internal/cli"
	"github.com/secexec/secexec/internal/npmtest"
)

// A real MCP client from npm (the official TypeScript SDK, pinned by
// testdata/mcpnode's lockfile) starts `secexec mcp` over stdio, lists the
// tools, creates a VM, runs echo hi with progress, reads a file.
func TestMCPNodeClientStdio(t *testing.T) {
	mods := npmtest.Install(t, "testdata/mcpnode", "mcp-node-")
	script, err := filepath.Abs("testdata/mcpnode/client.cjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", script, mods, os.Args[0], "mcp")
	cmd.Env = append(os.Environ(), cliProcessEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node client: %v\n%s", err, stderr)
	}
	var got struct {
		Tools []string `json:"tools"`
		Echo  struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
		} `json:"echo"`
		Progress []struct {
			Progress float64 `json:"progress"`
			Message  string  `json:"message"`
		} `json:"progress"`
		File struct {
			Content string `json:"content"`
		} `json:"file"`
		Denied struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"denied"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"exec", "file_list", "file_read", "file_write", "js_eval", "preview", "vm_close", "vm_create", "vm_list"} {
		if !slices.Contains(got.Tools, want) {
			t.Errorf("tools %v lack %s", got.Tools, want)
		}
	}
	if got.Echo.ExitCode != 0 || got.Echo.Stdout != "hi\n" {
		t.Errorf("echo hi: %+v", got.Echo)
	}
	var streamed string
	for _, p := range got.Progress {
		streamed += p.Message
	}
	if streamed != "hi\n" {
		t.Errorf("progress carried %q (%+v)", streamed, got.Progress)
	}
	if got.File.Content != "from the guest\n" {
		t.Errorf("file_read: %q", got.File.Content)
	}
	if !got.Denied.IsError || len(got.Denied.Content) == 0 || !strings.Contains(got.Denied.Content[0].Text, "no such VM") {
		t.Errorf("another VM's id: %+v", got.Denied)
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// `secexec mcp --http` serves streamable HTTP behind a bearer token; the
// Go SDK's client runs a command with progress and previews a server in
// the VM, which closing the VM unpublishes.
func TestMCPStreamableHTTP(t *testing.T) {
	cmd := exec.Command(os.Args[0], "mcp", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), cliProcessEnv+"=1", cli.MCPTokenEnv+"=s3cret")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	var endpoint string
	for endpoint == "" && lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "secexec mcp: serving "); ok {
			endpoint = u
		}
	}
	if endpoint == "" {
		t.Fatalf("no address on stderr: %v", lines.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	// Without the token: 401.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %s", resp.Status)
	}

	var mu sync.Mutex
	var streamed string
	client := mcp.NewClient(&mcp.Implementation{Name: "secexec-test", Version: "v0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			streamed += r.Params.Message
			mu.Unlock()
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any, token any) map[string]any {
		t.Helper()
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		if token != nil {
			p.SetProgressToken(token)
		}
		res, err := cs.CallTool(t.Context(), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, _ := res.StructuredContent.(map[string]any)
		if res.IsError {
			t.Fatalf("%s: %+v", name, res.Content[0])
		}
		return out
	}
	vm := call("vm_create", nil, nil)["vm_id"].(string)
	r := call("exec", map[string]any{"vm_id": vm, "command": "echo one; echo two"}, "p1")
	if r["stdout"] != "one\ntwo\n" {
		t.Errorf("exec: %v", r)
	}

	// A server in the VM, previewed on the host.
	url, served := serveInVM(t, cs, call, vm)
	list := call("vm_list", nil, nil)
	if vms, _ := list["vms"].([]any); len(vms) != 1 {
		t.Errorf("vm_list: %v", list)
	}
	call("vm_close", map[string]any{"vm_id": vm}, nil)
	<-served
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("the preview still answers after vm_close: %s", resp.Status)
	}
	mu.Lock()
	if !strings.HasPrefix(streamed, "one\ntwo\n") {
		t.Errorf("progress over HTTP carried %q", streamed)
	}
	mu.Unlock()

	// Ending the session (DELETE) closes its VMs, and so their previews,
	// even while a call runs on one: the server under exec ends with it.
	vm = call("vm_create", nil, nil)["vm_id"].(string)
	url, served = serveInVM(t, cs, call, vm)
	req, _ = http.NewRequestWithContext(t.Context(), "DELETE", endpoint, nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	<-served
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("the preview outlived its session: %s", resp.Status)
	}
}

// serveInVM starts a node HTTP server on port 8080 of the VM, previews
// it, and returns the preview's URL once the server answers through it,
// and a channel that gets the exec's end.
func serveInVM(t *testing.T, cs *mcp.ClientSession, call func(string, map[string]any, any) map[string]any, vm string) (string, <-chan map[string]any) {
	t.Helper()
	served := make(chan map[string]any, 1)
	go func() {
		// The longest timeout: only the VM's end stops it.
		res, err := cs.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{"vm_id": vm, "timeout_ms": 600_000,
			"command": `node -e "require('http').createServer((q, r) => r.end('hello from the guest')).listen(8080)"`}})
		out := map[string]any{"err": err}
		if res != nil {
			out["result"] = res.StructuredContent
		}
		served <- out
	}()
	url := call("preview", map[string]any{"vm_id": vm, "port": 8080}, nil)["url"].(string)
	if again := call("preview", map[string]any{"vm_id": vm, "port": 8080}, nil)["url"]; again != url {
		t.Errorf("a second preview of the port: %v, want %s", again, url)
	}
	for {
		// The server may not be listening yet: try until it answers.
		select {
		case s := <-served:
			t.Fatalf("the guest server ended: %v", s)
		case <-t.Context().Done():
			t.Fatal("the preview never answered")
		default:
		}
		resp, err := http.Get(url)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) == "hello from the guest" {
			return url, served
		}
	}
}

func TestMCPUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"mcp", "extra"},
		{"mcp", "--publish", "8080:80"},
		{"mcp", "--http", "0.0.0.0:0"},
		{"mcp", "--http", "0.0.0.0:0", "--allow-non-loopback", "--token-env", "SECEXEC_TEST_NO_SUCH_VAR"},
		{"mcp", "--max-output", "lots"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, "secexec: ") {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
}

// Over stdio the server answers on stdout and exits 0 at the end of its
// input; input that is not JSON-RPC ends it with one line and exit 1.
func TestMCPStdioEnds(t *testing.T) {
	stdin, feed := io.Pipe()
	stdout, answers := io.Pipe()
	var errb strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- cli.Main(t.Context(), []string{"mcp"}, stdin, answers, &errb)
		answers.Close()
	}()
	if _, err := io.WriteString(feed, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"serverInfo"`) || !strings.Contains(line, `"name":"secexec"`) {
		t.Errorf("initialize: %q %v", line, err)
	}
	feed.Close()
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if c := <-code; c != 0 {
		t.Errorf("exit %d at the end of input: %s", c, errb.String())
	}

	c, out, errOut := runCLI(t, "not json\n", "mcp")
	if c != cli.ExitError || out != "" || !strings.Contains(errOut, "secexec: invalid character") {
		t.Errorf("garbage: exit %d, stdout %q, stderr %q", c, out, errOut)
	}
}
