package cli_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/secexec/secexec/client"
)

// secexec --server URL port: a preview URL a browser opens with no token,
// then revoked.
func TestRemotePort(t *testing.T) {
	url, c := startServer(t)
	ctx := context.Background()
	vm, err := c.NewVM(ctx, client.VMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	remote := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, "", append([]string{"--server", url, "--token", remoteToken}, args...)...)
	}
	if code, _, errOut := remote("port", vm.ID(), "3000"); code != 1 || !strings.Contains(errOut, "not_found") {
		t.Fatalf("port of a closed port: exit %d, %q", code, errOut)
	}
	p, err := vm.Spawn(ctx, []string{"node", "-e", `require('http').createServer((q, r) => r.end('hi ' + q.url)).listen(3000, () => console.log('ready'))`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(p.Stdout, buf); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := remote("port", vm.ID(), "3000", "--ttl", "10m")
	preview := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(preview, url+"/p/") || !strings.Contains(errOut, "preview pv-") {
		t.Fatalf("port: exit %d, %q %q", code, out, errOut)
	}
	get := func() (int, string) {
		resp, err := http.Get(preview + "page")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get(); st != 200 || body != "hi /page" {
		t.Fatalf("preview: %d %q", st, body)
	}
	id := strings.Fields(strings.TrimPrefix(errOut, "secexec: preview "))[0]
	if code, _, errOut := remote("port", vm.ID(), "--revoke", id); code != 0 {
		t.Fatalf("revoke: exit %d, %q", code, errOut)
	}
	if st, _ := get(); st != http.StatusNotFound {
		t.Fatalf("revoked preview answers %d", st)
	}
	for _, args := range [][]string{
		{"port", vm.ID(), "0"},
		{"port", vm.ID(), "http"},
		{"port", vm.ID()},
		{"port", vm.ID(), "3000", "--ttl", "-1s"},
	} {
		if code, _, _ := remote(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, _, _ := runCLI(t, "", "port", vm.ID(), "3000"); code != 2 {
		t.Errorf("port without --server: exit %d, want 2", code)
	}
}
