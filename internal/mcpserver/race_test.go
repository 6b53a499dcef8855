package mcpserver_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/mcpserver"
	"github.com/secexec/secexec/kernel/policy"
)

// swapper is a guest program that, as fast as it can until /workspace/stop
// appears, swaps names between what the VM's policy allows and what it
// denies: two symlinks (a new link renamed over the old) point in turn
// at /workspace/ok and at /etc/secret, and the directory /workspace/ok
// and the file /workspace/f trade places with symlinks into /etc/secret.
// The second kind defeats a check of the resolved path: the name checked
// holds no symlink, until it does.
const swapper = `
const fs = require('fs');
const swap = (target, link) => { fs.symlinkSync(target, link + '.new'); fs.renameSync(link + '.new', link); };
fs.symlinkSync('/etc/secret', '/workspace/evil');
fs.symlinkSync('/etc/secret/key', '/workspace/fevil');
fs.writeFileSync('/workspace/started', '');
let n = 0;
while (!fs.existsSync('/workspace/stop')) {
	swap('/etc/secret', '/workspace/link');
	swap('/etc/secret/key', '/workspace/flink');
	fs.renameSync('/workspace/ok', '/workspace/okreal');
	fs.renameSync('/workspace/evil', '/workspace/ok');
	fs.renameSync('/workspace/f', '/workspace/freal');
	fs.renameSync('/workspace/fevil', '/workspace/f');
	swap('/workspace/ok', '/workspace/link');
	swap('/workspace/ok/key', '/workspace/flink');
	fs.renameSync('/workspace/ok', '/workspace/evil');
	fs.renameSync('/workspace/okreal', '/workspace/ok');
	fs.renameSync('/workspace/f', '/workspace/fevil');
	fs.renameSync('/workspace/freal', '/workspace/f');
	n++;
}
console.log(n);
`

// The file tools act as the guest, with the path walk and the policy
// check done at once in the kernel: a guest process that swaps a symlink
// between an allowed file and a denied one while file_read, file_write
// and file_list run through it never gets the tools to read, write or
// list the denied one (issue #24: "every tool permission-checked").
func TestFileToolsSymlinkRace(t *testing.T) {
	secret := t.TempDir()
	for name, data := range map[string]string{"key": "SECRET", "only-secret": "x"} {
		if err := os.WriteFile(filepath.Join(secret, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := insideVM()
	base.DenyFS(policy.AllFSOps(), "/etc/secret", "/etc/secret/**")
	srv := newServer(t, mcpserver.Config{Base: secexec.Options{Permissions: base,
		Mounts: []secexec.Mount{{Path: "/etc/secret", HostDir: secret}}}})
	c := connect(t, srv)
	vm := c.newVM(nil)
	c.ok("file_write", map[string]any{"vm_id": vm, "path": "/workspace/ok/key", "content": "public", "mkdirs": true}, &struct{}{})
	c.ok("file_write", map[string]any{"vm_id": vm, "path": "/workspace/ok/public", "content": "y"}, &struct{}{})
	c.ok("file_write", map[string]any{"vm_id": vm, "path": "/workspace/f", "content": "public"}, &struct{}{})
	// Before the race: the guest itself may not read the secret.
	if r := c.exec(map[string]any{"vm_id": vm, "command": "cat /etc/secret/key"}); r.ExitCode == 0 || strings.Contains(r.Stdout, "SECRET") {
		t.Fatalf("the guest reads the denied file: %+v", r)
	}

	done := make(chan string, 1)
	go func() {
		res, err := c.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "exec",
			Arguments: map[string]any{"vm_id": vm, "argv": []string{"node", "-e", swapper}, "timeout_ms": 300_000}})
		switch {
		case err != nil:
			done <- err.Error()
		case res.IsError:
			done <- resultText(res)
		default:
			data, _ := json.Marshal(res.StructuredContent)
			done <- string(data)
		}
	}()
	for {
		// Until the swapper runs.
		res := c.call("file_read", map[string]any{"vm_id": vm, "path": "/workspace/started"}, nil)
		if !res.IsError {
			break
		}
		select {
		case out := <-done:
			t.Fatalf("the swapper ended before it started: %s", out)
		default:
		}
	}

	// Until both outcomes were seen often (the swapper runs at its own
	// pace), or for at most maxRounds.
	const enough, maxRounds = 200, 5000
	files := []string{"/workspace/flink", "/workspace/link/key", "/workspace/ok/key", "/workspace/f"}
	var read, denied int
	leaks := map[string]int{} // tool and path → times the denied file was reached
	rounds := 0
	for ; rounds < maxRounds && (read < enough || denied < enough); rounds++ {
		for _, p := range files {
			res := c.call("file_read", map[string]any{"vm_id": vm, "path": p}, nil)
			var out struct {
				Content string `json:"content"`
			}
			if !res.IsError {
				data, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(data, &out)
				read++
			} else if strings.Contains(resultText(res), "permission denied") {
				denied++
			}
			if strings.Contains(out.Content, "SECRET") || strings.Contains(resultText(res), "SECRET") {
				leaks["file_read "+p]++
			}
		}
		for _, p := range files {
			c.call("file_write", map[string]any{"vm_id": vm, "path": p, "content": "overwritten"}, nil)
			if got, err := os.ReadFile(filepath.Join(secret, "key")); err != nil || string(got) != "SECRET" {
				leaks["file_write "+p]++
				_ = os.WriteFile(filepath.Join(secret, "key"), []byte("SECRET"), 0o644)
			}
		}
		for _, p := range []string{"/workspace/link", "/workspace/ok"} {
			res := c.call("file_list", map[string]any{"vm_id": vm, "path": p}, nil)
			if data, _ := json.Marshal(res.StructuredContent); strings.Contains(string(data), "only-secret") {
				leaks["file_list "+p]++
			}
		}
	}
	c.ok("file_write", map[string]any{"vm_id": vm, "path": "/workspace/stop", "content": ""}, &struct{}{})
	t.Logf("swapper: %s", <-done)
	t.Logf("%d reads of the allowed file, %d denied", read, denied)
	for _, what := range slices.Sorted(maps.Keys(leaks)) {
		t.Errorf("%s reached the denied file in %d of %d rounds", what, leaks[what], rounds)
	}
	// Both outcomes happened, or the race was not run.
	if read < enough || denied < enough {
		t.Errorf("the link did not swap under the tools: %d reads, %d denials", read, denied)
	}
}
