package secexec_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// guestFSVM is a VM whose policy allows everything but /etc/secret (a
// host directory holding key = "KEY" and only-secret) and writes under /workspace/ro,
// with a memory mount at /mnt/data and a read-only host mount at /mnt/ro.
// Its host FS has laid out links into and around the denied tree.
func guestFSVM(t *testing.T, mode secexec.EngineMode) (*secexec.VM, string) {
	t.Helper()
	ctx := t.Context()
	secret, ro := t.TempDir(), t.TempDir()
	for _, name := range []string{filepath.Join(secret, "key"), filepath.Join(secret, "only-secret"), filepath.Join(ro, "file")} {
		if err := os.WriteFile(name, []byte(strings.ToUpper(filepath.Base(name))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	perms := secexec.AllowAll().
		DenyFS(policy.AllFSOps(), "/etc/secret", "/etc/secret/**").
		DenyFS(policy.WriteOps(), "/workspace/ro", "/workspace/ro/**")
	vm := newVM(t, secexec.Options{Engine: mode, Permissions: perms, Mounts: []secexec.Mount{
		{Path: "/etc/secret", HostDir: secret}, {Path: "/mnt/data"}, {Path: "/mnt/ro", HostDir: ro, ReadOnly: true}}})
	h := vm.FS()
	for name, data := range map[string]string{"/workspace/ok.txt": "public", "/workspace/ro/f": "ro", "/root/note": "root's"} {
		if err := h.MkdirAll(ctx, filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(ctx, name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"/workspace/out":    "/etc/secret/key", // out of the allowed trees
		"/workspace/outdir": "/etc/secret",
		"/workspace/rel":    "../etc/secret/key",
		"/workspace/loop":   "/workspace/loop",
		"/workspace/data":   "/mnt/data", // into a mount
		"/tmp/ro":           "/workspace/ro",
	} {
		if err := h.Symlink(ctx, target, link); err != nil {
			t.Fatal(err)
		}
	}
	return vm, secret
}

// vm.FS().AsGuest() acts as the guest user under the VM's policy, with
// the kernel resolving each path as the guest's own open would: links out
// of the allowed trees, ".." escapes, mounts, a parent directory the file
// modes close, in every engine mode. The host's FS of the same VM reaches
// all of it.
func TestGuestFS(t *testing.T) {
	for _, mode := range engineModes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := t.Context()
			vm, secret := guestFSVM(t, mode)
			h, g := vm.FS(), vm.FS().AsGuest()

			read := map[string]string{ // path → content, or "" for a denial
				"/workspace/ok.txt":                        "public",
				"ok.txt":                                   "public", // relative to the VM's cwd
				"/etc/secret/key":                          "",
				"/workspace/out":                           "",
				"/workspace/outdir/key":                    "",
				"/workspace/rel":                           "",
				"/workspace/../etc/secret/key":             "",
				"/../../etc/secret/key":                    "",
				"/workspace/outdir/../secret/key":          "",
				"/workspace/outdir/../../workspace/ok.txt": "public",
				"/root/note":                               "", // /root is root's 0700
				"/mnt/ro/file":                             "FILE",
				"/tmp/ro/f":                                "ro",
			}
			for name, want := range read {
				got, err := g.ReadFile(ctx, name)
				switch {
				case want == "" && !errors.Is(err, fs.ErrPermission):
					t.Errorf("guest ReadFile %s: %q, %v; want a permission error", name, got, err)
				case want != "" && (err != nil || string(got) != want):
					t.Errorf("guest ReadFile %s: %q, %v; want %q", name, got, err, want)
				}
			}
			// ".." is the guest's, taken after the link: outdir/.. is /etc.
			if got, err := g.ReadFile(ctx, "/workspace/outdir/../hostname"); err != nil || string(got) != "secexec\n" {
				t.Errorf("guest ReadFile /workspace/outdir/../hostname: %q, %v", got, err)
			}
			if _, err := g.ReadFile(ctx, "/workspace/loop"); !errors.Is(err, errno.ELOOP) {
				t.Errorf("guest ReadFile of a link loop: %v", err)
			}
			buf := make([]byte, 3)
			if _, err := g.ReadAt(ctx, "/workspace/out", buf, 1); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest ReadAt through a link to the denied tree: %v", err)
			}
			if n, err := g.ReadAt(ctx, "/workspace/ok.txt", buf, 1); n != 3 || string(buf) != "ubl" || err != nil {
				t.Errorf("guest ReadAt: %d %q %v", n, buf, err)
			}
			for _, name := range []string{"/etc/secret/key", "/workspace/outdir/key"} {
				if _, err := g.Stat(ctx, name); !errors.Is(err, fs.ErrPermission) {
					t.Errorf("guest Stat %s: %v", name, err)
				}
			}
			// The link itself is the guest's to see.
			if fi, err := g.Lstat(ctx, "/workspace/out"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("guest Lstat of the link: %v %v", fi, err)
			}

			for _, name := range []string{"/etc/secret", "/workspace/outdir", "/root"} {
				if _, err := g.ReadDir(ctx, name); !errors.Is(err, fs.ErrPermission) {
					t.Errorf("guest ReadDir %s: %v", name, err)
				}
			}
			ents, err := g.ReadDir(ctx, "/workspace")
			if err != nil || len(ents) == 0 {
				t.Fatalf("guest ReadDir /workspace: %v %v", ents, err)
			}
			for _, e := range ents {
				if _, err := e.Info(); err != nil {
					t.Errorf("Info of %s: %v", e.Name(), err)
				}
			}

			// Writes: denied through links and ".." alike; the file modes
			// hold (/etc is root's); a read-only mount is EROFS.
			for _, name := range []string{"/etc/secret/key", "/workspace/out", "/workspace/outdir/key", "/workspace/rel",
				"/workspace/../etc/secret/new", "/workspace/ro/f", "/tmp/ro/new", "/etc/motd", "/root/x"} {
				if err := g.WriteFile(ctx, name, []byte("pwned"), 0o644); !errors.Is(err, fs.ErrPermission) {
					t.Errorf("guest WriteFile %s: %v", name, err)
				}
			}
			if err := g.WriteFile(ctx, "/mnt/ro/file", []byte("x"), 0o644); !errors.Is(err, errno.EROFS) {
				t.Errorf("guest WriteFile on a read-only mount: %v", err)
			}
			if err := g.WriteAt(ctx, "/workspace/out", []byte("x"), 0); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest WriteAt through a link to the denied tree: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(secret, "key")); string(got) != "KEY" {
				t.Errorf("the denied file was changed: %q", got)
			}
			for _, name := range []string{"/workspace/outdir/sub", "/etc/secret/sub/deeper", "/workspace/ro/d", "/root/d"} {
				if err := g.MkdirAll(ctx, name, 0o755); !errors.Is(err, fs.ErrPermission) {
					t.Errorf("guest MkdirAll %s: %v", name, err)
				}
			}
			// What the guest makes is the guest's, as its programs' files are.
			if err := g.MkdirAll(ctx, "/workspace/data/a/b", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := g.WriteFile(ctx, "/workspace/data/a/b/f", []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"/mnt/data/a/b", "/mnt/data/a/b/f"} {
				if fi, err := vm.FS().Stat(ctx, name); err != nil || fi.Stat().UID != secexec.GuestUID {
					t.Errorf("%s made by the guest: %v %v", name, fi, err)
				}
			}
			if err := g.Rename(ctx, "/workspace/ok.txt", "/etc/secret/ok.txt"); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest Rename into the denied tree: %v", err)
			}
			if err := g.Remove(ctx, "/workspace/outdir/key"); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest Remove through a link: %v", err)
			}
			if err := g.Chmod(ctx, "/workspace/out", 0o777); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest Chmod through a link: %v", err)
			}
			// Mounts are the embedder's.
			if err := g.Mount(ctx, secexec.Mount{Path: "/mnt/new"}); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest Mount: %v", err)
			}
			if err := g.Unmount(ctx, "/etc/secret"); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("guest Unmount: %v", err)
			}

			// A watch is the guest's inotify: refused on the denied tree,
			// through a link too; allowed elsewhere.
			for _, name := range []string{"/etc/secret", "/workspace/outdir", "/workspace/out", "/root"} {
				if w, err := g.Watch(ctx, name, nil); !errors.Is(err, fs.ErrPermission) {
					t.Errorf("guest Watch %s: %v", name, err)
					if w != nil {
						_ = w.Close()
					}
				}
			}
			w, err := g.Watch(ctx, "/workspace", &secexec.WatchOptions{Recursive: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := h.WriteFile(ctx, "/workspace/watched", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if ev, err := w.Next(ctx); err != nil || ev.Name != "watched" {
				t.Errorf("guest watch: %+v %v", ev, err)
			}

			// The host's FS of the same VM is untouched by all this.
			for _, name := range []string{"/workspace/out", "/root/note"} {
				if _, err := h.ReadFile(ctx, name); err != nil {
					t.Errorf("host ReadFile %s: %v", name, err)
				}
			}
		})
	}
}

// The guest FS answers as the guest's own programs do: what cat can read
// through a path, AsGuest reads; what cat may not, AsGuest may not.
func TestGuestFSMatchesGuest(t *testing.T) {
	ctx := t.Context()
	vm, _ := guestFSVM(t, secexec.EngineInProcess)
	g := vm.FS().AsGuest()
	for _, name := range []string{"/workspace/ok.txt", "/etc/secret/key", "/workspace/out", "/workspace/outdir/key",
		"/workspace/rel", "/workspace/outdir/../hostname", "/root/note", "/mnt/ro/file", "/tmp/ro/f", "/workspace/loop"} {
		r, err := vm.Exec(ctx, "cat "+name, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.ReadFile(ctx, name)
		if (r.ExitCode == 0) != (err == nil) || err == nil && string(got) != string(r.Stdout) {
			t.Errorf("%s: cat exits %d (%q), the guest FS says %q, %v", name, r.ExitCode, r.Stderr, got, err)
		}
	}
}

// raceSwapper swaps, until /workspace/stop appears, the directory
// /workspace/d and the file /workspace/f with symlinks into /etc/secret:
// a check of the path the embedder named, followed by an act on it,
// would find no symlink there and then follow one.
const raceSwapper = `
const fs = require('fs');
fs.symlinkSync('/etc/secret', '/workspace/evil');
fs.symlinkSync('/etc/secret/key', '/workspace/fevil');
fs.writeFileSync('/workspace/started', '');
let n = 0;
for (; !fs.existsSync('/workspace/stop'); n++) {
	fs.renameSync('/workspace/d', '/workspace/dreal');
	fs.renameSync('/workspace/evil', '/workspace/d');
	fs.renameSync('/workspace/f', '/workspace/freal');
	fs.renameSync('/workspace/fevil', '/workspace/f');
	fs.renameSync('/workspace/d', '/workspace/evil');
	fs.renameSync('/workspace/dreal', '/workspace/d');
	fs.renameSync('/workspace/f', '/workspace/fevil');
	fs.renameSync('/workspace/freal', '/workspace/f');
}
console.log(n);
`

// A guest process that swaps names between allowed and denied trees
// while the guest FS works through them never gets it to read, write or
// list the denied tree, in every engine mode.
func TestGuestFSSymlinkRace(t *testing.T) {
	for _, mode := range engineModes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := t.Context()
			vm, secret := guestFSVM(t, mode)
			h, g := vm.FS(), vm.FS().AsGuest()
			if err := h.MkdirAll(ctx, "/workspace/d", 0o755); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"/workspace/d/key", "/workspace/f"} {
				if err := h.WriteFile(ctx, name, []byte("public"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := vm.Spawn(ctx, []string{"node", "-e", raceSwapper}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for {
				// Until the swapper runs.
				if _, err := g.Stat(ctx, "/workspace/started"); err == nil {
					break
				}
			}
			// Until both outcomes were seen often (the swapper runs at its
			// own pace), or for at most maxRounds.
			const enough, maxRounds = 100, 100_000
			var ok, denied int
			for round := 0; round < maxRounds && (ok < enough || denied < enough); round++ {
				for _, name := range []string{"/workspace/d/key", "/workspace/f"} {
					got, err := g.ReadFile(ctx, name)
					if strings.Contains(string(got), "KEY") {
						t.Fatalf("guest ReadFile %s returned the denied file", name)
					}
					if err == nil {
						ok++
					} else if errors.Is(err, fs.ErrPermission) {
						denied++
					}
					_ = g.WriteFile(ctx, name, []byte("overwritten"), 0o644)
				}
				ents, _ := g.ReadDir(ctx, "/workspace/d")
				for _, e := range ents {
					if e.Name() == "only-secret" {
						t.Fatal("guest ReadDir listed the denied directory")
					}
				}
			}
			if err := h.WriteFile(ctx, "/workspace/stop", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := p.Wait(ctx)
			if err != nil || st.ExitCode != 0 {
				t.Fatalf("the swapper: %+v %v", st, err)
			}
			if got, _ := os.ReadFile(filepath.Join(secret, "key")); string(got) != "KEY" {
				t.Fatalf("the denied file was written: %q", got)
			}
			t.Logf("%d reads of the allowed files, %d denied", ok, denied)
			if ok < enough || denied < enough {
				t.Errorf("the names did not swap under the guest FS: %d reads, %d denials", ok, denied)
			}
		})
	}
}

// The cost of acting as the guest: the policy check on each path is the
// only work the host's FS does not do. Compare host and guest per engine
// mode.
func BenchmarkFSReadFile(b *testing.B) {
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EngineShared} {
		vm, err := secexec.NewVM(b.Context(), secexec.Options{Engine: mode, Permissions: secexec.AllowAll().
			DenyFS(policy.AllFSOps(), "/etc/secret/**").DenyFS(policy.WriteOps(), "/workspace/ro/**")})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = vm.Close() })
		if err := vm.FS().MkdirAll(b.Context(), "/workspace/a/b", 0o755); err != nil {
			b.Fatal(err)
		}
		if err := vm.FS().WriteFile(b.Context(), "/workspace/a/b/f", []byte("data"), 0o644); err != nil {
			b.Fatal(err)
		}
		for i, fsys := range []*secexec.FS{vm.FS(), vm.FS().AsGuest()} {
			b.Run(mode.String()+"/"+[]string{"host", "guest"}[i], func(b *testing.B) {
				for b.Loop() {
					if _, err := fsys.ReadFile(b.Context(), "/workspace/a/b/f"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
