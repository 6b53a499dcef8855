package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --mount options reach the VM: a quota refuses a sparse 1 TiB file and a
// symlink to a host path is refused, unless external-symlinks is given.
func TestMountOptions(t *testing.T) {
	dir := t.TempDir()
	script := `const fs = require('fs');
try { fs.writeFileSync('/m/f', ''); fs.truncateSync('/m/f', 2 ** 40); console.log('grew'); } catch (e) { console.log(e.code); }
try { fs.symlinkSync('/etc/shadow', '/m/l'); console.log('linked'); } catch (e) { console.log(e.code); }`
	code, out, errOut := runCLI(t, "", "exec", "--allow-write", "/m", "--mount", dir+":/m:rw,quota=1M", "--", "node", "-e", script)
	if got := strings.Join(strings.Fields(out), " "); code != 0 || got != "ENOSPC EPERM" {
		t.Errorf("quota=1M: exit %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "exec", "--allow-write", "/m", "--mount", dir+":/m:external-symlinks", "--", "node", "-e",
		`require('fs').symlinkSync('/etc/shadow', '/m/l2'); console.log('linked')`)
	if code != 0 || strings.TrimSpace(out) != "linked" {
		t.Errorf("external-symlinks: exit %d %q %q", code, out, errOut)
	}
	if target, err := os.Readlink(filepath.Join(dir, "l2")); err != nil || target != "/etc/shadow" {
		t.Errorf("host link: %q %v", target, err)
	}
}
