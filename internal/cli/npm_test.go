package cli_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/secexec/secexec"
)

// --allow-npm-registry lets the guest's npm reach the host npm's
// registry; without it npm is refused. The registry's addresses are
// named too, because on this machine its name resolves into a
// documentation range that a name rule alone does not open.
func TestAllowNPMRegistry(t *testing.T) {
	ctx := context.Background()
	u, err := secexec.NPMRegistry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(secexec.NPMRegistryRule(u))
	addrs, err := net.DefaultResolver.LookupHost(ctx, u.Hostname())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"exec", "--allow-npm-registry"}
	for _, a := range addrs {
		args = append(args, "--allow-net", net.JoinHostPort(a, port))
	}
	cmd := "cd /tmp && npm view is-number@7.0.0 version --fetch-retries=0"
	code, out, errOut := runCLI(t, "", append(args, cmd)...)
	if code != 0 || out != "7.0.0\n" {
		t.Fatalf("with the grant: exit %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "exec", cmd)
	if code == 0 || !strings.Contains(errOut, "EACCES") {
		t.Fatalf("without the grant: exit %d %q %q", code, out, errOut)
	}
}
