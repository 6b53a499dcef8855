package secexec_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// insidePermissions is the CLI's standard set: everything inside the VM,
// no network beyond it.
func insidePermissions() *policy.Policy {
	p := policy.DenyAll().AllowFS(policy.AllFSOps(), "/**").AllowExec("*", "/**")
	p.Net = append(p.Net, policy.NetRule{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetListen}, Hosts: []string{"*"}})
	return p
}

// registryPermissions adds the rule for the host's npm registry and,
// because a name alone never opens special address ranges (this
// machine's registry name resolves into a documentation range), rules
// naming the addresses it resolves to here.
func registryPermissions(t *testing.T) *policy.Policy {
	t.Helper()
	ctx := context.Background()
	u, err := secexec.NPMRegistry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rule := secexec.NPMRegistryRule(u)
	_, port, _ := net.SplitHostPort(rule)
	p := insidePermissions().AllowNet(rule)
	addrs, err := net.DefaultResolver.LookupHost(ctx, u.Hostname())
	if err != nil {
		t.Fatalf("resolving the registry %s: %v", u.Hostname(), err)
	}
	for _, a := range addrs {
		p.AllowNet(net.JoinHostPort(a, port))
	}
	return p
}

// copyToVM writes the files of a host directory into the VM.
func copyToVM(t *testing.T, vm *secexec.VM, hostDir, guestDir string) {
	t.Helper()
	ctx := context.Background()
	err := filepath.WalkDir(hostDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(hostDir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := guestDir + "/" + filepath.ToSlash(rel)
		if err := vm.FS().MkdirAll(ctx, filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return vm.FS().WriteFile(ctx, dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sh runs a command line in the VM and fails the test unless it exits 0.
func sh(t *testing.T, vm *secexec.VM, cmdline string, env map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := vm.Exec(ctx, cmdline, &secexec.ExecOptions{Env: env})
	if err != nil {
		t.Fatalf("%s: %v", cmdline, err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", cmdline, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// The real npm CLI runs on the guest node against the host's registry:
// init, install, run (scripts through the guest shell), npx, a locked
// project of 72 packages whose entry point serves HTTP, and install
// scripts that run inside the VM only. One VM (and its npm cache) serves
// every step.
func TestNPMInVM(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: registryPermissions(t), Limits: secexec.Limits{FSBytes: 256 << 20}})
	u, _ := secexec.NPMRegistry(ctx)

	t.Run("registry", func(t *testing.T) {
		got := strings.TrimSpace(sh(t, vm, "npm config get registry", nil))
		if got != u.String() {
			t.Fatalf("guest npm uses %q, host npm %q", got, u)
		}
	})
	t.Run("init-install-require", func(t *testing.T) {
		out := sh(t, vm, `mkdir -p /workspace/p && cd /workspace/p && npm init -y >/dev/null && npm install is-number@7.0.0 --no-audit --no-fund >/dev/null && node -e 'console.log(require("is-number")(5), require("./package.json").dependencies["is-number"])'`, nil)
		if out != "true ^7.0.0\n" {
			t.Fatalf("%q", out)
		}
	})
	t.Run("run-script", func(t *testing.T) {
		copyToVM(t, vm, "testdata/npm/express", "/workspace/app")
		out := sh(t, vm, "cd /workspace/app && npm run --silent greet", map[string]string{"GREETING": "world"})
		if out != "hello world\ngreet\n" {
			t.Fatalf("%q", out)
		}
	})
	t.Run("npx", func(t *testing.T) {
		out := sh(t, vm, "cd /workspace/p && npx --yes semver@7.6.3 -r '^1.2.0' 1.1.9 1.2.3 1.9.0", nil)
		if out != "1.2.3\n1.9.0\n" {
			t.Fatalf("%q", out)
		}
	})
	t.Run("ci-locked-project", func(t *testing.T) {
		out := sh(t, vm, "cd /workspace/app && npm ci --no-audit --no-fund >/dev/null && ls node_modules | wc -l && npm start --silent", nil)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || lines[1] != "200 ok from express" {
			t.Fatalf("%q", out)
		}
		if n := strings.TrimSpace(lines[0]); n < "50" || len(n) != 2 {
			t.Fatalf("%s packages in node_modules, want ~70", n)
		}
	})
	t.Run("install-scripts-stay-inside", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret.txt")
		if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		mark := "secexec-hook-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000")
		copyToVM(t, vm, "testdata/npm/hooks", "/workspace/hooks")
		out := sh(t, vm, `cd /workspace/hooks && npm init -y >/dev/null && npm install ./dep --no-audit --no-fund >/dev/null 2>&1 && cat "/tmp/$HOOK_MARK-pre" "/tmp/$HOOK_MARK-post"`,
			map[string]string{"HOOK_MARK": mark, "HOST_SECRET": secret})
		if out != "pre\nENOENT" {
			t.Fatalf("hooks wrote %q, want pre and an ENOENT for the host path", out)
		}
		for _, suffix := range []string{"-pre", "-post"} {
			if _, err := os.Stat(filepath.Join(os.TempDir(), mark+suffix)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("an install script wrote on the host: %v", err)
			}
		}
	})
}

// Without a network rule the guest's npm cannot reach the registry.
func TestNPMNeedsRegistryRule(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: insidePermissions()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := vm.Exec(ctx, "cd /tmp && npm view is-number@7.0.0 version --fetch-retries=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "EACCES") {
		t.Fatalf("npm reached the registry without a rule: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func toolsDir(t *testing.T) string {
	t.Helper()
	c := os.Getenv("SECEXEC_CACHE_DIR")
	if c == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		c = filepath.Join(uc, "secexec")
	}
	m, _ := filepath.Glob(filepath.Join(c, "tools", "*", "usr", "lib", "node_modules", "typescript", "bin", "tsc"))
	if len(m) == 0 {
		t.Fatal("no typescript in the tools cache (set-up should have installed it)")
	}
	return m[0]
}

// tsc in the VM reports what the same tsc reports on the host, with its
// exit code 2, for a project with type errors.
func TestTSCInVMMatchesHost(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: insidePermissions()})
	copyToVM(t, vm, "testdata/ts/project", "/workspace/proj")
	ctx := context.Background()
	res, err := vm.Exec(ctx, "cd /workspace/proj && npx tsc --noEmit -p .", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The host's node runs the cached tsc (set-up installed it) as the
	// reference; the test's own host node is needed for set-up anyway.
	cmd := exec.Command("node", toolsDir(t), "--noEmit", "-p", ".")
	cmd.Dir = "testdata/ts/project"
	want, herr := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(herr, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("host tsc: %v %s", herr, want)
	}
	if res.ExitCode != 2 || string(res.Stdout) != string(want) {
		t.Fatalf("VM tsc: exit %d\n%s\nstderr %s\nhost tsc:\n%s", res.ExitCode, res.Stdout, res.Stderr, want)
	}
}

// vm.TS().Check reports structured diagnostics with the positions of the
// files as given, runs the default options without a tsconfig.json
// (node's types included), and refuses names that leave its directory.
func TestTSCheck(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: insidePermissions()})
	diags, err := vm.TS().Check(ctx, map[string][]byte{
		"src/main.ts": []byte("import { readFileSync } from \"node:fs\";\nimport { twice } from \"./lib.ts\";\n\nconst n: number = twice(\"x\");\nconsole.log(readFileSync.name, n);\n"),
		"src/lib.ts":  []byte("export function twice(s: string): string {\n  return s + s;\n}\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := secexec.Diagnostic{File: "src/main.ts", Line: 4, Column: 7, Code: 2322, Category: "error",
		Message: "Type 'string' is not assignable to type 'number'."}
	if len(diags) != 1 || diags[0] != want {
		t.Fatalf("diagnostics %+v, want [%+v]", diags, want)
	}
	if s := diags[0].String(); s != "src/main.ts:4:7 - error TS2322: Type 'string' is not assignable to type 'number'." {
		t.Fatalf("String() = %q", s)
	}

	// A project's own tsconfig.json rules; a clean program has nothing.
	files := map[string][]byte{}
	for _, name := range []string{"tsconfig.json", "src/util.ts"} {
		b, err := os.ReadFile(filepath.Join("testdata/ts/project", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	if diags, err := vm.TS().Check(ctx, files); err != nil || len(diags) != 0 {
		t.Fatalf("clean project: %+v %v", diags, err)
	}

	// Files already in the VM, by path.
	copyToVM(t, vm, "testdata/ts/project", "/workspace/proj")
	diags, err = vm.TS().CheckFiles(ctx, "/workspace/proj/src/main.ts")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	wantFiles := []string{
		"/workspace/proj/src/main.ts:3:38 - error TS2322: Type 'string' is not assignable to type 'number'.",
		"/workspace/proj/src/main.ts:4:7 - error TS2322: Type 'string' is not assignable to type 'number'.",
		"/workspace/proj/src/main.ts:5:33 - error TS2339: Property 'email' does not exist on type 'User'.",
	}
	if strings.Join(got, "\n") != strings.Join(wantFiles, "\n") {
		t.Fatalf("CheckFiles:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantFiles, "\n"))
	}

	for _, bad := range []string{"../escape.ts", "/etc/x.ts", "a/../../x.ts", "", "a\x00.ts", "./a.ts"} {
		if _, err := vm.TS().Check(ctx, map[string][]byte{bad: []byte("x")}); !errors.Is(err, errno.EINVAL) {
			t.Errorf("name %q: %v, want EINVAL", bad, err)
		}
	}
	// Nothing of the scratch directories is left behind.
	ents, err := vm.FS().ReadDir(ctx, "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".secexec-tscheck-") {
			t.Fatalf("left %s in /tmp", e.Name())
		}
	}
}

// The tools are the host cache's files, shared by every VM: a guest can
// neither change nor remove them, nor add to them (npm install -g fails
// with EROFS).
func TestToolsReadOnly(t *testing.T) {
	vm := newVM(t, secexec.Options{Permissions: insidePermissions()})
	ctx := context.Background()
	tsc := toolsDir(t)
	before, err := os.ReadFile(tsc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"echo 'console.log(\"owned\")' > /usr/lib/node_modules/typescript/bin/tsc",
		"rm -rf /usr/lib/node_modules/npm",
		"mv /usr/lib/node_modules/typescript /tmp/ts",
		"touch /usr/lib/node_modules/evil.js",
		"ln -s /tmp /usr/lib/node_modules/npm/lib/x",
		"mkdir /usr/lib/node_modules/is-number", // where npm install -g would put it: EROFS
	} {
		res, err := vm.Exec(ctx, cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 {
			t.Errorf("%s: succeeded", cmd)
		}
	}
	res, err := vm.Exec(ctx, "tsc --version && ls /usr/lib/node_modules | wc -l", nil)
	if err != nil || string(res.Stdout) != "Version 5.9.3\n4\n" {
		t.Fatalf("tools after the attacks: %v %q %q", err, res.Stdout, res.Stderr)
	}
	after, err := os.ReadFile(tsc)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the host's tsc changed: %v", err)
	}
}
