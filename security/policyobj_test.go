package security_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/policy"
)

// Issue 19, finding 9: policy deny rules protect paths, and a link or a
// rename gave the protected object another name the rules did not cover.
// These attacks run as a guest would: ln, mv, cat and shell redirections,
// and node's fs.linkSync/renameSync.

// objVM makes a VM that allows everything except what deny adds, with
// files put in place by the embedder (whose calls the policy does not
// govern).
func objVM(t *testing.T, deny func(p *secexec.Permissions), files map[string]string, audit func(secexec.AuditEvent)) *secexec.VM {
	t.Helper()
	p := secexec.AllowAll()
	deny(p)
	vm := newVM(t, secexec.Options{Permissions: p, Audit: audit})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, data := range files {
		dir := name[:strings.LastIndexByte(name, '/')]
		if err := vm.FS().MkdirAll(ctx, dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vm.FS().WriteFile(ctx, name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return vm
}

// readBack returns a guest file's content as the embedder sees it, or
// "<missing>".
func readBack(t *testing.T, vm *secexec.VM, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := vm.FS().ReadFile(ctx, name)
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// combined is a result's stdout and stderr.
func combined(r *secexec.Result) string { return string(r.Stdout) + string(r.Stderr) }

const topSecret = "TOP-SECRET-9f3c"

// A read deny on a file: ln and mv gave it a readable name; with read,
// link, rename, symlink and stat denied too, renaming the parent
// directory did.
func TestPolicyObjReadDeny(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []policy.FSOp
	}{
		{"read", []policy.FSOp{policy.FSRead}},
		{"read-link-rename-symlink-stat", []policy.FSOp{policy.FSRead, policy.FSLink, policy.FSRename, policy.FSSymlink, policy.FSStat}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := objVM(t, func(p *secexec.Permissions) {
				p.DenyFS(tc.ops, "/workspace/secret.txt", "/workspace/d/secret.txt")
			}, map[string]string{"/workspace/secret.txt": topSecret, "/workspace/d/secret.txt": topSecret}, nil)
			for _, a := range []struct{ name, cmd string }{
				{"cat", "cat secret.txt"},
				{"ln", "ln secret.txt x; cat x"},
				{"ln-dir", "mkdir -p l; ln secret.txt l/x; cat l/x"},
				{"mv", "mv secret.txt y; cat y"},
				{"mv-parent", "mv d e; cat e/secret.txt"},
				{"mv-parent-back", "mkdir -p e2 && mv e2 d2 && mv d d2/d; cat d2/d/secret.txt"},
				{"symlink", "ln -s secret.txt s; cat s; ln -s d sd; cat sd/secret.txt"},
			} {
				r := sh(t, vm, a.cmd)
				if strings.Contains(combined(r), topSecret) {
					t.Errorf("%s: the secret leaked: %q", a.name, trunc([]byte(combined(r))))
				}
				// With stat denied too, ln fails its stat of the source first.
				if r.ExitCode == 0 || tc.name == "read" && !strings.Contains(combined(r), "ermission denied") {
					t.Errorf("%s: no permission error: exit %d %q", a.name, r.ExitCode, trunc([]byte(combined(r))))
				}
			}
			r := node(t, vm, `
const fs = require('fs');
const tries = {
  link: () => fs.linkSync('secret.txt', 'n1'),
  rename: () => fs.renameSync('secret.txt', 'n2'),
  renameParent: () => fs.renameSync('d', 'n3'),
  read: () => fs.readFileSync('secret.txt', 'utf8'),
};
for (const [k, f] of Object.entries(tries)) {
  try { console.log(k, 'ok', String(f())); } catch (e) { console.log(k, e.code); }
}`)
			for _, want := range []string{"link EACCES", "rename EACCES", "renameParent EACCES", "read EACCES"} {
				if !strings.Contains(string(r.Stdout), want) {
					t.Errorf("node: want %q in %q (stderr %q)", want, r.Stdout, trunc(r.Stderr))
				}
			}
			if strings.Contains(combined(r), topSecret) {
				t.Errorf("node: the secret leaked")
			}
			for _, f := range []string{"/workspace/secret.txt", "/workspace/d/secret.txt"} {
				if got := readBack(t, vm, f); got != topSecret {
					t.Errorf("%s is now %q: a move went through", f, got)
				}
			}
			usable(t, vm)
		})
	}
}

// The example of docs/permissions.md as it was (write denied on
// /workspace/.git/) and as it is now (every mutating op denied): neither
// lets the guest change .git through another name.
func TestPolicyObjGitExample(t *testing.T) {
	files := map[string]string{
		"/workspace/.git/config":      "orig",
		"/workspace/.git/hooks/.keep": "",
		"/workspace/src/main.js":      "console.log(1)",
	}
	for _, tc := range []struct {
		name string
		ops  []policy.FSOp
	}{
		{"old-example-write", []policy.FSOp{policy.FSWrite}},
		{"fixed-example", policy.WriteOps()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var refused []secexec.AuditEvent
			vm := objVM(t, func(p *secexec.Permissions) {
				p.DenyFS(tc.ops, "/workspace/.git/")
			}, files, func(e secexec.AuditEvent) {
				if e.To != "" {
					mu.Lock()
					refused = append(refused, e)
					mu.Unlock()
				}
			})
			for _, a := range []struct{ name, cmd string }{
				{"write", "echo pwned > .git/config"},
				{"mv-out-and-back", "mv .git g; echo pwned > g/config; mv g .git"},
				{"ln-out", "ln .git/config c; echo pwned > c"},
				{"plant-hook-mv", "echo 'echo pwned' > h; chmod +x h; mv h .git/hooks/pre-commit"},
				{"plant-hook-ln", "echo 'echo pwned' > h2; ln h2 .git/hooks/post-commit"},
				{"symlink", "ln -s .git sg; echo pwned > sg/config"},
				{"plant-dir", "mkdir -p x/hooks && echo pwned > x/hooks/pre-push && mv x/hooks .git/hooks2"},
			} {
				r := sh(t, vm, a.cmd)
				if !strings.Contains(combined(r), "ermission denied") {
					t.Errorf("%s: no permission error: exit %d %q", a.name, r.ExitCode, trunc([]byte(combined(r))))
				}
			}
			r := node(t, vm, `
const fs = require('fs');
for (const [k, f] of Object.entries({
  renameGit: () => fs.renameSync('.git', 'g3'),
  linkConfig: () => fs.linkSync('.git/config', 'c3'),
  renameInto: () => { fs.writeFileSync('h3', 'x'); fs.renameSync('h3', '.git/hooks/pre-rebase'); },
})) {
  try { f(); console.log(k, 'ok'); } catch (e) { console.log(k, e.code); }
}`)
			for _, want := range []string{"renameGit EACCES", "linkConfig EACCES", "renameInto EACCES"} {
				if !strings.Contains(string(r.Stdout), want) {
					t.Errorf("node: want %q in %q (stderr %q)", want, r.Stdout, trunc(r.Stderr))
				}
			}
			if tc.name == "old-example-write" {
				// The refusal reaches the embedder's audit with both names.
				want := secexec.AuditEvent{Domain: "fs", Op: "rename", Target: "/workspace/.git", To: "/workspace/g3", Rule: -1}
				found := false
				for end := time.Now().Add(5 * time.Second); !found && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
					mu.Lock()
					for _, e := range refused {
						e.Time = time.Time{}
						found = found || e == want
					}
					mu.Unlock()
				}
				if !found {
					mu.Lock()
					t.Errorf("no audit event %+v in %+v", want, refused)
					mu.Unlock()
				}
			}
			if got := readBack(t, vm, "/workspace/.git/config"); got != "orig" {
				t.Errorf(".git/config is %q", got)
			}
			for _, f := range []string{"pre-commit", "post-commit", "pre-rebase"} {
				if got := readBack(t, vm, "/workspace/.git/hooks/"+f); got != "<missing>" {
					t.Errorf("hook %s planted: %q", f, got)
				}
			}
			if got := readBack(t, vm, "/workspace/.git/hooks2/pre-push"); got != "<missing>" {
				t.Errorf("hooks2 planted: %q", got)
			}
			usable(t, vm)
		})
	}
}

// What must keep working under the fixed example: renaming and linking
// ordinary files and directories, a lock-file-and-rename workflow outside
// .git, and npm install writing node_modules.
func TestPolicyObjLegit(t *testing.T) {
	vm := objVM(t, func(p *secexec.Permissions) {
		p.DenyFS(policy.WriteOps(), "/workspace/.git/")
		p.DenyFS([]policy.FSOp{policy.FSRead}, "/**/*.pem")
	}, map[string]string{
		"/workspace/.git/config":       "orig",
		"/workspace/dep/package.json":  `{"name":"dep","version":"1.0.0","main":"index.js"}`,
		"/workspace/dep/index.js":      `module.exports = 'dep works'`,
		"/workspace/app/package.json":  `{"name":"app","version":"1.0.0"}`,
		"/workspace/keys/server.pem":   "KEY",
		"/workspace/keys/readme.txt":   "r",
		"/workspace/other/.git/config": "mine",
	}, nil)
	steps := []struct{ name, cmd, want string }{
		{"mv-dirs", "mkdir -p src/a && echo 1 > src/a/f && mv src/a src/b && mv src lib && cat lib/b/f", "1\n"},
		{"ln", "echo 2 > f2 && ln f2 f3 && mkdir -p sub && ln f3 sub/f4 && cat sub/f4", "2\n"},
		{"lock-rename", "cd other/.git && echo a > index.lock && mv index.lock index && echo b > index.lock && mv index.lock index && cat index", "b\n"},
		{"mv-other-repo", "mv other other2 && cat other2/.git/config", "mine"},
		{"read-git", "cat .git/config", "orig"},
		{"mv-readme", "mv keys/readme.txt keys/readme2.txt && cat keys/readme2.txt", "r"},
		{"git", "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; " +
			"mkdir repo && cd repo && git init -q && echo hi > a && git add a && git commit -q -m one && " +
			"mv a b && git add -A && git commit -q -m two && cd .. && mv repo repo2 && git -C repo2 log --oneline | wc -l", "2\n"},
		{"mv-keys-dir", "mv keys keys2 && ls keys2", "readme2.txt\nserver.pem\n"},
	}
	for _, s := range steps {
		if r := sh(t, vm, s.cmd); r.ExitCode != 0 || string(r.Stdout) != s.want {
			t.Errorf("%s: exit %d stdout %q, want %q; stderr %q", s.name, r.ExitCode, r.Stdout, s.want, trunc(r.Stderr))
		}
	}
	r := node(t, vm, `
const fs = require('fs');
fs.mkdirSync('n/a/b', {recursive: true});
fs.writeFileSync('n/a/b/f', 'x');
fs.renameSync('n/a', 'n/c');
fs.linkSync('n/c/b/f', 'n/g');
fs.renameSync('n', 'm');
console.log(fs.readFileSync('m/g', 'utf8'), fs.readdirSync('m/c/b').join());`)
	if string(r.Stdout) != "x f\n" {
		t.Errorf("node renames: %q %q", r.Stdout, trunc(r.Stderr))
	}
	r = sh(t, vm, `cd app && npm pack ../dep >/dev/null 2>&1 && npm install ./dep-1.0.0.tgz --offline --no-audit --no-fund >/dev/null 2>&1; echo "status $?"; node -e 'console.log(require("dep"))'`)
	if string(r.Stdout) != "status 0\ndep works\n" {
		t.Errorf("npm install: %q %q", r.Stdout, trunc(r.Stderr))
	}
	usable(t, vm)
}
