package piptest_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
)

// hostPip is Debian's python3 with its pip, setuptools and wheel
// (python3-pip, python3-setuptools, python3-wheel; .ci/run installs
// them): it builds the test wheels offline and is the reference the
// VM's pip is compared with.
const hostPip = "/usr/bin/python3"

// testPkg is a source tree host pip builds a wheel from.
type testPkg struct {
	name, version string
	deps          []string
	extras        map[string][]string
	scripts       map[string]string
}

// buildWheels builds real wheels of pkgs with host pip (setuptools'
// PEP 517 backend, no network) into a new directory.
func buildWheels(t *testing.T, pkgs []testPkg) string {
	t.Helper()
	src, out := t.TempDir(), t.TempDir()
	// One pip command per batch of distinct names (pip wheel resolves
	// its arguments together, and two versions of one name conflict).
	var batches [][]string
	batchOf := map[string]int{}
	for _, p := range pkgs {
		dir := filepath.Join(src, p.name+"-"+p.version)
		var b strings.Builder
		fmt.Fprintf(&b, "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n")
		fmt.Fprintf(&b, "[project]\nname = %q\nversion = %q\ndescription = %q\n", p.name, p.version, "test package "+p.name)
		fmt.Fprintf(&b, "dependencies = [")
		for i, d := range p.deps {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", d)
		}
		b.WriteString("]\n")
		if len(p.extras) > 0 {
			b.WriteString("[project.optional-dependencies]\n")
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range p.extras {
					if !yield(k) {
						return
					}
				}
			}) {
				fmt.Fprintf(&b, "%s = [", k)
				for i, d := range p.extras[k] {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "%q", d)
				}
				b.WriteString("]\n")
			}
		}
		if len(p.scripts) > 0 {
			b.WriteString("[project.scripts]\n")
			for k, v := range p.scripts {
				fmt.Fprintf(&b, "%s = %q\n", k, v)
			}
		}
		mod := filepath.Join(dir, p.name)
		if err := os.MkdirAll(mod, 0o755); err != nil {
			t.Fatal(err)
		}
		code := fmt.Sprintf("VERSION = %q\n\n\ndef main():\n    print(%q, VERSION)\n", p.version, p.name)
		if err := os.WriteFile(filepath.Join(mod, "__init__.py"), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		i := batchOf[p.name]
		batchOf[p.name]++
		if i == len(batches) {
			batches = append(batches, nil)
		}
		batches[i] = append(batches[i], dir)
	}
	for _, dirs := range batches {
		args := append([]string{"-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-cache-dir", "-q", "-w", out}, dirs...)
		cmd := exec.Command(hostPip, args...)
		cmd.Env = hostPipEnv(t)
		cmd.Dir = t.TempDir() // not this package's, whose subprocess.py would shadow CPython's
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("host pip wheel: %v\n%s", err, b)
		}
	}
	return out
}

// sixWheel builds a wheel of Debian's six module (python3-six), the
// package whose install time is measured.
func sixWheel(t *testing.T, out string) {
	t.Helper()
	dir := t.TempDir()
	six, err := os.ReadFile("/usr/lib/python3/dist-packages/six.py")
	if err != nil {
		t.Fatalf("Debian's python3-six: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "six.py"), six, 0o644); err != nil {
		t.Fatal(err)
	}
	toml := "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n" +
		"[project]\nname = \"six\"\nversion = \"1.16.0\"\n[tool.setuptools]\npy-modules = [\"six\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hostPip, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-cache-dir", "-q", "-w", out, dir)
	cmd.Env = hostPipEnv(t)
	cmd.Dir = t.TempDir() // not this package's, whose subprocess.py would shadow CPython's
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("host pip wheel six: %v\n%s", err, b)
	}
}

func hostPipEnv(t *testing.T) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "PIP_CONFIG_FILE=/dev/null",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INDEX=", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
}

// pipIndex is a PEP 503 "simple" index of the wheels in a directory,
// served on the host's loopback, with each file's sha256 in its link.
type pipIndex struct {
	srv  *httptest.Server
	dir  string
	port string
	// corrupt serves files with a byte changed (the links keep the true
	// hashes).
	corrupt bool
	mu      sync.Mutex
	paths   []string
}

var nameRun = regexp.MustCompile(`[-_.]+`)

func canonicalName(s string) string { return strings.ToLower(nameRun.ReplaceAllString(s, "-")) }

func newPipIndex(t *testing.T, dir string, tls bool) *pipIndex {
	ix := &pipIndex{dir: dir}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", func(w http.ResponseWriter, r *http.Request) {
		ix.log(r.URL.Path)
		name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		ents, _ := os.ReadDir(ix.dir)
		var links []string
		for _, e := range ents {
			if dist, _, ok := strings.Cut(e.Name(), "-"); ok && canonicalName(dist) == name {
				b, err := os.ReadFile(filepath.Join(ix.dir, e.Name()))
				if err != nil {
					continue
				}
				links = append(links, fmt.Sprintf("<a href=\"../../files/%s#sha256=%x\">%s</a><br/>", e.Name(), sha256.Sum256(b), e.Name()))
			}
		}
		if len(links) == 0 {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>Links for %s</title></head><body><h1>Links for %s</h1>\n%s\n</body></html>\n",
			name, name, strings.Join(links, "\n"))
	})
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		ix.log(r.URL.Path)
		b, err := os.ReadFile(filepath.Join(ix.dir, filepath.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if ix.corrupt {
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0xff
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		_, _ = w.Write(b)
	})
	if tls {
		ix.srv = httptest.NewTLSServer(mux)
	} else {
		ix.srv = httptest.NewServer(mux)
	}
	t.Cleanup(ix.srv.Close)
	_, ix.port, _ = net.SplitHostPort(ix.srv.Listener.Addr().String())
	return ix
}

func (ix *pipIndex) log(p string) {
	ix.mu.Lock()
	ix.paths = append(ix.paths, p)
	ix.mu.Unlock()
}

func (ix *pipIndex) requests() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return append([]string(nil), ix.paths...)
}

func (ix *pipIndex) url() string { return ix.srv.URL + "/simple" }

// hostPipRun runs host pip with a clean configuration.
func hostPipRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(hostPip, append([]string{"-m", "pip"}, args...)...)
	cmd.Env = hostPipEnv(t)
	cmd.Dir = t.TempDir() // not this package's, whose subprocess.py would shadow CPython's
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// vmSh runs a shell script in the VM, with the environment of the
// tests plus extra.
func vmSh(t *testing.T, h *vmhost.Host, script string, extra ...string) runResult {
	t.Helper()
	r := vmtest.Run(t, h, "", extra, "sh", "-c", script)
	return runResult{stdout: r.Stdout, stderr: r.Stderr, exit: r.Exit}
}

// The packages of the pip tests: a dependency chain with version
// ranges, a marker that never applies here, an extra, and a script.
var chainPkgs = []testPkg{
	{name: "sxtop", version: "1.0", deps: []string{"sxmid>=2,<3", "sxwin; sys_platform == 'win32'"},
		extras: map[string][]string{"more": {"sxextra"}}, scripts: map[string]string{"sxtop": "sxtop:main"}},
	{name: "sxmid", version: "1.0"},
	{name: "sxmid", version: "2.0", deps: []string{"sxleaf==1.2"}},
	{name: "sxmid", version: "2.1", deps: []string{"sxleaf~=1.2.0", "sxleaf!=1.2.1"}},
	{name: "sxmid", version: "3.0"},
	{name: "sxleaf", version: "1.2"},
	{name: "sxleaf", version: "1.3"},
	{name: "sxextra", version: "1.0"},
	{name: "sxbeta", version: "1.0"},
	{name: "sxbeta", version: "2.0b1"},
}

// treeProgram prints a JSON map of every file under argv[1] (but
// __pycache__) to its text; RECORD files keep only their rows for files
// inside the tree, without bytecode (host pip compiles it, the VM's pip
// does not, and host pip's --target RECORD names scripts relative to a
// temporary directory).
const treeProgram = `import os, sys, json, csv, io
root = sys.argv[1]
out = {}
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x != "__pycache__"]
    for f in files:
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)
        text = open(p, encoding="utf-8").read()
        if f == "RECORD":
            rows = [r for r in csv.reader(io.StringIO(text)) if r and "__pycache__" not in r[0] and not r[0].startswith("..") and not r[0].startswith("bin/")]
            text = sorted(rows)
        out[rel] = text
print(json.dumps(out, sort_keys=True, indent=1))
`

func TestPipInstallMatchesHostPip(t *testing.T) {
	wheels := buildWheels(t, chainPkgs)
	ix := newPipIndex(t, wheels, false)
	h := newHost(t, vmhost.Config{Policy: policy.AllowAll().AllowNet("127.0.0.1:" + ix.port)})

	// Host pip installs into a --target directory; so does the VM's.
	ht := t.TempDir()
	hostOut, hostErr, code := hostPipRun(t, "install", "--no-cache-dir", "--target", ht, "-i", ix.url(), "sxtop")
	if code != 0 {
		t.Fatalf("host pip install: %d\n%s\n%s", code, hostOut, hostErr)
	}
	got := vmSh(t, h, "python3 -m pip install --target /tmp/vt -i "+ix.url()+" sxtop")
	if got.exit.Code != 0 {
		t.Fatalf("VM pip install: %d\n%s\n%s", got.exit.Code, got.stdout, got.stderr)
	}
	for _, prefix := range []string{"Looking in indexes: ", "Installing collected packages: ", "Successfully installed "} {
		if want, have := lineWith(hostOut, prefix), lineWith(got.stdout, prefix); want == "" || want != have {
			t.Errorf("%q line: VM %q, host %q", prefix, have, want)
		}
	}
	wantTree, _, _ := hostPythonArgs(t, hostPip, "-c", treeProgram, ht)
	gotTree := run(t, h, "", "python3", "-c", treeProgram, "/tmp/vt")
	if gotTree.stdout != wantTree || wantTree == "" {
		t.Fatalf("installed files differ:\nVM:\n%s%s\nhost:\n%s", gotTree.stdout, gotTree.stderr, wantTree)
	}
	if !strings.Contains(wantTree, `"sxleaf-1.2.dist-info/METADATA"`) || !strings.Contains(wantTree, `"sxmid-2.1.dist-info/METADATA"`) ||
		strings.Contains(wantTree, `"sxextra-`) || strings.Contains(wantTree, `"sxwin-`) {
		t.Fatalf("the host oracle did not resolve as expected:\n%s", wantTree)
	}
	// The marker that does not apply was never looked up.
	for _, p := range ix.requests() {
		if strings.Contains(p, "sxwin") || strings.Contains(p, "sxextra") {
			t.Errorf("the VM's pip fetched %s", p)
		}
	}

	// list, freeze and show over the same directories.
	for _, args := range [][]string{{"list", "--path", "DIR"}, {"list", "--path", "DIR", "--format=freeze"},
		{"freeze", "--path", "DIR"}, {"list", "--path", "DIR", "--format=json"}} {
		hargs := slices.Clone(args)
		hargs[slices.Index(hargs, "DIR")] = ht
		want, _, wcode := hostPipRun(t, hargs...)
		vargs := slices.Clone(args)
		vargs[slices.Index(vargs, "DIR")] = "/tmp/vt"
		r := run(t, h, "", append([]string{"python3", "-m", "pip"}, vargs...)...)
		if r.stdout != want || r.exit.Code != wcode {
			t.Errorf("pip %q: VM %d\n%s%s\nhost %d\n%s", args, r.exit.Code, r.stdout, r.stderr, wcode, want)
		}
	}
	want, _, wcode := hostPythonEnv(t, []string{"PYTHONPATH=" + ht}, hostPip, "-m", "pip", "show", "-f", "sxmid", "sxtop")
	r := vmSh(t, h, "PYTHONPATH=/opt/secexec/python:/tmp/vt python3 -m pip show -f sxmid sxtop")
	want = strings.ReplaceAll(want, ht, "/tmp/vt")
	// Host pip compiled bytecode (listed in its RECORD) and names the
	// script from its temporary directory.
	want = regexp.MustCompile(`(?m)^  (.*__pycache__.*|\.\./.*bin/sxtop)\n`).ReplaceAllString(want, "")
	have := regexp.MustCompile(`(?m)^  bin/sxtop\n`).ReplaceAllString(r.stdout, "")
	if have != want || r.exit.Code != wcode {
		t.Errorf("pip show: VM %d\n%s%s\nhost %d\n%s", r.exit.Code, r.stdout, r.stderr, wcode, want)
	}
	// The script runs the entry point.
	r = vmSh(t, h, "PYTHONPATH=/opt/secexec/python:/tmp/vt /tmp/vt/bin/sxtop")
	if r.stdout != "sxtop 1.0\n" || r.exit.Code != 0 {
		t.Errorf("sxtop script: %d %q %q", r.exit.Code, r.stdout, r.stderr)
	}
}

// lineWith returns the first line of s that starts with prefix.
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func hostPythonArgs(t *testing.T, py string, args ...string) (string, string, int) {
	return hostPythonEnv(t, nil, py, args...)
}

func hostPythonEnv(t *testing.T, env []string, py string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(py, args...)
	cmd.Env = append(hostPipEnv(t), env...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// The VM's pip takes its index from pip.conf files, PIP_* variables and
// options, installs for the user with scripts, version specifiers,
// extras and requirements files, uninstalls, checks hashes and fails
// like pip for an index it cannot reach.
func TestPipUserInstallConfigAndUninstall(t *testing.T) {
	wheels := buildWheels(t, chainPkgs)
	sixWheel(t, wheels)
	ix := newPipIndex(t, wheels, false)
	only := buildWheels(t, []testPkg{{name: "sxonly", version: "0.1"}})
	ix2 := newPipIndex(t, only, false)
	tlsIx := newPipIndex(t, only, true)
	bad := newPipIndex(t, wheels, false)
	bad.corrupt = true
	denied := newPipIndex(t, wheels, false)
	pol := policy.AllowAll().AllowNet("127.0.0.1:"+ix.port, "127.0.0.1:"+ix2.port, "127.0.0.1:"+tlsIx.port, "127.0.0.1:"+bad.port)
	h := newHost(t, vmhost.Config{Policy: pol})
	ctx := context.Background()
	write := func(p, s string) {
		t.Helper()
		if err := h.MkdirAll(ctx, filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(ctx, p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustRun := func(script string, extra ...string) runResult {
		t.Helper()
		r := vmSh(t, h, script, extra...)
		if r.exit.Code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", script, r.exit.Code, r.stdout, r.stderr)
		}
		return r
	}

	// six from the index named in /etc/pip.conf, timed.
	write("/etc/pip.conf", "[global]\nindex-url = "+ix.url()+"\n")
	start := time.Now()
	r := mustRun("python3 -m pip install six")
	t.Logf("python3 -m pip install six: %v", time.Since(start))
	if !strings.Contains(r.stdout, "Looking in indexes: "+ix.url()+"\n") || !strings.Contains(r.stdout, "Successfully installed six-1.16.0\n") ||
		!strings.Contains(r.stdout, "Defaulting to user installation because normal site-packages is not writeable\n") {
		t.Fatalf("install six:\n%s", r.stdout)
	}
	if r := mustRun("python3 -c 'import six; print(six.__file__, six.PY3)'"); r.stdout != "/home/user/.local/lib/python3.12/site-packages/six.py True\n" {
		t.Fatalf("import six: %q", r.stdout)
	}

	// The user's pip.conf overrides /etc/pip.conf, PIP_INDEX_URL both.
	write("/home/user/.config/pip/pip.conf", "[global]\nindex-url = http://127.0.0.1:1/simple\n")
	r = vmSh(t, h, "python3 -m pip install sxleaf")
	if r.exit.Code != 1 || !strings.HasSuffix(r.stderr, "ERROR: No matching distribution found for sxleaf\n") {
		t.Fatalf("user pip.conf not read: %d\n%s\n%s", r.exit.Code, r.stdout, r.stderr)
	}
	// --user, a version specifier, an extra and a script.
	r = mustRun("python3 -m pip install --user 'sxtop[more]' 'sxleaf<1.3'", "PIP_INDEX_URL="+ix.url())
	if !strings.Contains(r.stdout, "Successfully installed sxextra-1.0 sxleaf-1.2 sxmid-2.1 sxtop-1.0\n") ||
		!strings.Contains(r.stderr, "WARNING: The script sxtop is installed in '/home/user/.local/bin' which is not on PATH.") {
		t.Fatalf("install:\n%s\n%s", r.stdout, r.stderr)
	}
	if r := mustRun("~/.local/bin/sxtop && PATH=$HOME/.local/bin:$PATH sxtop && python3 -c 'import sxextra, sxleaf; print(sxleaf.VERSION)'"); r.stdout != "sxtop 1.0\nsxtop 1.0\n1.2\n" {
		t.Fatalf("installed packages: %q", r.stdout)
	}
	// A requirements file that names its index, with a marker and a
	// comment; --upgrade moves sxleaf to 1.3, which sxmid 2.1 forbids:
	// so sxmid is pinned to 2.0 and sxleaf==1.2 there.
	write("/workspace/requirements.txt", "# test\n--index-url "+ix.url()+"\nsxmid==2.0 ; python_version >= \"3\"  # pinned\nsxbeta\n")
	r = mustRun("python3 -m pip install -r requirements.txt")
	if !strings.Contains(r.stdout, "Successfully installed sxbeta-1.0 sxmid-2.0\n") || !strings.Contains(r.stdout, "Uninstalling sxmid-2.1:") {
		t.Fatalf("install -r:\n%s", r.stdout)
	}
	// --upgrade --pre and PIP_EXTRA_INDEX_URL, -i overriding the
	// configuration.
	r = mustRun("python3 -m pip install -U --pre -i "+ix.url()+" sxbeta sxonly", "PIP_EXTRA_INDEX_URL="+ix2.url())
	if !strings.Contains(r.stdout, "Looking in indexes: "+ix.url()+", "+ix2.url()+"\n") || !strings.Contains(r.stdout, "Successfully installed sxbeta-2.0b1 sxonly-0.1\n") {
		t.Fatalf("install --pre:\n%s\n%s", r.stdout, r.stderr)
	}
	// https with a certificate the VM does not trust: refused, unless
	// the host is trusted.
	r = vmSh(t, h, "python3 -m pip uninstall -y sxonly && python3 -m pip install -i "+tlsIx.url()+" sxonly")
	if r.exit.Code != 1 || !strings.Contains(r.stderr, "ERROR: No matching distribution found for sxonly") || !strings.Contains(r.stderr, "CERTIFICATE_VERIFY_FAILED") {
		t.Fatalf("untrusted https index: %d\n%s\n%s", r.exit.Code, r.stdout, r.stderr)
	}
	mustRun("python3 -m pip install --trusted-host 127.0.0.1:" + tlsIx.port + " -i " + tlsIx.url() + " sxonly")

	// list and freeze show the user's packages; pip uninstall removes
	// every file (and the script).
	r = mustRun("pip3 freeze --user") // the command, as python3 -m pip
	if r.stdout != "six==1.16.0\nsxbeta==2.0b1\nsxextra==1.0\nsxleaf==1.2\nsxmid==2.0\nsxonly==0.1\nsxtop==1.0\n" {
		t.Fatalf("freeze:\n%s", r.stdout)
	}
	r = mustRun("python3 -m pip uninstall -y sxtop sxnothere && ls ~/.local/bin; python3 -c 'import sxtop'; python3 -m pip list --user")
	if !strings.Contains(r.stdout, "Found existing installation: sxtop 1.0\nUninstalling sxtop-1.0:\n  Successfully uninstalled sxtop-1.0\n") ||
		!strings.Contains(r.stderr, "WARNING: Skipping sxnothere as it is not installed.") || strings.Contains(r.stdout, "\nsxtop ") ||
		strings.Contains(r.stderr, "ls: ") ||
		!strings.Contains(r.stderr, "ModuleNotFoundError: No module named 'sxtop'") {
		t.Fatalf("uninstall:\n%s\n%s", r.stdout, r.stderr)
	}
	if r := mustRun("find ~/.local -name '*sxtop*' | wc -l"); strings.TrimSpace(r.stdout) != "0" {
		t.Fatalf("left behind: %s", r.stdout)
	}

	// A wheel that does not match the hash in the index's link.
	r = vmSh(t, h, "python3 -m pip install -i "+bad.url()+" sxextra==1.0 --force-reinstall; python3 -m pip list --user --format=freeze")
	if r.exit.Code != 0 || !strings.Contains(r.stderr, "THESE PACKAGES DO NOT MATCH THE HASHES") || !strings.Contains(r.stdout, "sxextra==1.0") {
		t.Fatalf("hash mismatch: %d\n%s\n%s", r.exit.Code, r.stdout, r.stderr)
	}

	// An index the net rules deny ends as host pip's does for an index
	// nothing answers at.
	_, hostErr, hostCode := hostPipRun(t, "install", "--no-cache-dir", "--retries", "0", "--target", t.TempDir(), "-i", "http://127.0.0.1:1/simple", "sxbeta==1.1")
	r = vmSh(t, h, "python3 -m pip install -i "+denied.url()+" sxbeta==1.1")
	if r.exit.Code != hostCode || lastLine(r.stderr) != lastLine(hostErr) || hostCode != 1 {
		t.Fatalf("denied index: VM %d\n%s\nhost %d\n%s", r.exit.Code, r.stderr, hostCode, hostErr)
	}
	if n := len(denied.requests()); n != 0 {
		t.Fatalf("the denied index saw %d requests", n)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// python3 -m venv makes an environment like CPython's: pyvenv.cfg,
// bin/python, bin/pip, bin/activate, and its own site-packages, which
// pip installs into and which nothing else sees.
func TestPipVenv(t *testing.T) {
	wheels := buildWheels(t, chainPkgs)
	ix := newPipIndex(t, wheels, false)
	h := newHost(t, vmhost.Config{Policy: policy.AllowAll().AllowNet("127.0.0.1:" + ix.port)})

	// Host CPython's venv, the reference for pyvenv.cfg's keys.
	hv := filepath.Join(t.TempDir(), "ve")
	if _, e, code := hostPythonArgs(t, hostPip, "-m", "venv", "--without-pip", hv); code != 0 {
		t.Fatalf("host venv: %s", e)
	}
	cfg, err := os.ReadFile(filepath.Join(hv, "pyvenv.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	keys := func(s string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			k, _, _ := strings.Cut(l, "=")
			out = append(out, strings.TrimSpace(k))
		}
		return out
	}
	r := vmSh(t, h, "cd /tmp && python3 -m venv ve && cat ve/pyvenv.cfg && ls ve/bin ve/lib/python3.12/site-packages | wc -l")
	lines := strings.Split(r.stdout, "\n")
	if r.exit.Code != 0 || len(lines) < 6 || !slices.Equal(keys(strings.Join(lines[:5], "\n")), keys(string(cfg))) {
		t.Fatalf("venv: %d\n%s\n%s\nhost pyvenv.cfg:\n%s", r.exit.Code, r.stdout, r.stderr, cfg)
	}
	if !strings.Contains(r.stdout, "include-system-site-packages = false\n") || !strings.Contains(r.stdout, "command = /usr/bin/python3 -m venv /tmp/ve\n") {
		t.Fatalf("pyvenv.cfg:\n%s", r.stdout)
	}
	r = vmSh(t, h, "/tmp/ve/bin/python -m pip install -i "+ix.url()+" sxtop && /tmp/ve/bin/sxtop && "+
		"/tmp/ve/bin/python -c 'import sys, sxmid; print(sys.prefix, sys.executable, sxmid.__file__)' && "+
		"python3 -c 'import sxmid' 2>&1 | tail -1; python3 -m pip list --user | grep -c sx; "+
		". /tmp/ve/bin/activate && echo $VIRTUAL_ENV && pip list && python -c 'import sys; print(sys.prefix)' && deactivate && echo $PATH")
	want := "sxtop 1.0\n/tmp/ve /tmp/ve/bin/python /tmp/ve/lib/python3.12/site-packages/sxmid/__init__.py\n" +
		"ModuleNotFoundError: No module named 'sxmid'\n0\n/tmp/ve\n" +
		"Package Version\n------- -------\nsxleaf  1.2\nsxmid   2.1\nsxtop   1.0\n/tmp/ve\n/usr/bin:/bin\n"
	got := r.stdout
	if i := strings.Index(got, "sxtop 1.0\n"); i >= 0 {
		got = got[i:]
	}
	if got != want || strings.Contains(r.stderr, "not on PATH") {
		t.Fatalf("venv pip:\n%s\nstderr:\n%s\nwant tail:\n%s", r.stdout, r.stderr, want)
	}
	// An extra asked for by a later requirement of the same run.
	r = vmSh(t, h, "/tmp/ve/bin/pip install -i "+ix.url()+" sxtop 'sxtop[more]' && /tmp/ve/bin/python -c 'import sxextra; print(sxextra.VERSION)'")
	if r.exit.Code != 0 || !strings.HasSuffix(r.stdout, "Installing collected packages: sxextra\nSuccessfully installed sxextra-1.0\n1.0\n") {
		t.Fatalf("extra: %d\n%s\n%s", r.exit.Code, r.stdout, r.stderr)
	}
	// Wheel files named on the command line, dependency first whatever
	// their order; uninstall asks first.
	ctx := context.Background()
	for _, f := range []string{"sxmid-2.1-py3-none-any.whl", "sxleaf-1.2-py3-none-any.whl"} {
		b, err := os.ReadFile(filepath.Join(wheels, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(ctx, "/workspace/"+f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = vmSh(t, h, "python3 -m venv /tmp/v2 && /tmp/v2/bin/pip install --no-index ./sxmid-2.1-py3-none-any.whl sxleaf-1.2-py3-none-any.whl && "+
		"echo n | /tmp/v2/bin/pip uninstall sxleaf && /tmp/v2/bin/pip freeze && echo y | /tmp/v2/bin/pip uninstall sxleaf && /tmp/v2/bin/pip freeze")
	want = "Processing ./sxmid-2.1-py3-none-any.whl\nProcessing sxleaf-1.2-py3-none-any.whl\n" +
		"Installing collected packages: sxleaf, sxmid\nSuccessfully installed sxleaf-1.2 sxmid-2.1\n" +
		"Found existing installation: sxleaf 1.2\nUninstalling sxleaf-1.2:\n  Would remove:\n" +
		"    /tmp/v2/lib/python3.12/site-packages/sxleaf-1.2.dist-info/*\n    /tmp/v2/lib/python3.12/site-packages/sxleaf/*\n" +
		"Proceed (Y/n)? sxleaf==1.2\nsxmid==2.1\n" +
		"Found existing installation: sxleaf 1.2\nUninstalling sxleaf-1.2:\n  Would remove:\n" +
		"    /tmp/v2/lib/python3.12/site-packages/sxleaf-1.2.dist-info/*\n    /tmp/v2/lib/python3.12/site-packages/sxleaf/*\n" +
		"Proceed (Y/n)?   Successfully uninstalled sxleaf-1.2\nsxmid==2.1\n"
	if r.exit.Code != 0 || r.stdout != want {
		t.Fatalf("wheel files: %d\n%s\n%s", r.exit.Code, r.stdout, r.stderr)
	}
	// --user makes no sense in an environment, as pip says.
	r = vmSh(t, h, "/tmp/ve/bin/pip install --user -i "+ix.url()+" sxleaf")
	if r.exit.Code != 1 || r.stderr != "ERROR: Can not perform a '--user' install. User site-packages are not visible in this virtualenv.\n" {
		t.Fatalf("--user in a venv: %d %q", r.exit.Code, r.stderr)
	}
}

// zipWheel writes a wheel (a zip) with the given members.
func zipWheel(t *testing.T, dir, name string, members map[string][]byte, big map[string]int64) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for k := range members {
			if !yield(k) {
				return
			}
		}
	}) {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(members[n])
	}
	for n, size := range big {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		zero := make([]byte, 1<<20)
		for i := int64(0); i < size; i += int64(len(zero)) {
			_, _ = w.Write(zero)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wheelMeta(name string) map[string][]byte {
	di := name + "-1.0.dist-info/"
	return map[string][]byte{
		di + "METADATA": []byte("Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"),
		di + "WHEEL":    []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
		di + "RECORD":   []byte(di + "METADATA,,\n" + di + "WHEEL,,\n" + di + "RECORD,,\n"),
	}
}

// Wheels whose members or RECORD name paths outside the install
// directory are refused before anything is written; a zip bomb ends at
// the VM's filesystem limit and leaves nothing behind.
func TestPipRefusesHostileWheels(t *testing.T) {
	dir := t.TempDir()
	esc := wheelMeta("sxesc")
	esc["../../../../tmp/escaped.py"] = []byte("print('escaped')\n")
	zipWheel(t, dir, "sxesc-1.0-py3-none-any.whl", esc, nil)
	abs := wheelMeta("sxabs")
	abs["/tmp/absolute.py"] = []byte("print('absolute')\n")
	zipWheel(t, dir, "sxabs-1.0-py3-none-any.whl", abs, nil)
	rec := wheelMeta("sxrec")
	rec["sxrec.py"] = []byte("x = 1\n")
	rec["sxrec-1.0.dist-info/RECORD"] = []byte("sxrec.py,,\n../../../.bashrc,,\nsxrec-1.0.dist-info/RECORD,,\n")
	zipWheel(t, dir, "sxrec-1.0-py3-none-any.whl", rec, nil)
	data := wheelMeta("sxdata")
	data["sxdata-1.0.data/scripts/../../../../../../tmp/escaped-script"] = []byte("#!python\n")
	zipWheel(t, dir, "sxdata-1.0-py3-none-any.whl", data, nil)
	zipWheel(t, dir, "sxbomb-1.0-py3-none-any.whl", wheelMeta("sxbomb"), map[string]int64{"sxbomb/zeros.bin": 256 << 20})
	// A name with only a source distribution: refused with a reason.
	if err := os.WriteFile(filepath.Join(dir, "sxsrc-1.0.tar.gz"), []byte("not built here"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sxbomb-1.0-py3-none-any.whl")); err != nil || fi.Size() > 2<<20 {
		t.Fatalf("bomb: %v %v", fi, err)
	}
	ix := newPipIndex(t, dir, false)
	h := newHost(t, vmhost.Config{Policy: policy.AllowAll().AllowNet("127.0.0.1:" + ix.port),
		Limits: kernel.Limits{FSBytes: 48 << 20}})
	for _, tc := range []struct{ name, msg string }{
		{"sxesc", "ERROR: The wheel sxesc-1.0-py3-none-any.whl has a file '../../../../tmp/escaped.py' outside its directory: refusing to install it"},
		{"sxabs", "ERROR: The wheel sxabs-1.0-py3-none-any.whl has a file '/tmp/absolute.py' outside its directory: refusing to install it"},
		{"sxrec", "ERROR: The wheel sxrec-1.0-py3-none-any.whl has a RECORD entry '../../../.bashrc' outside its directory: refusing to install it"},
		{"sxdata", "ERROR: The wheel sxdata-1.0-py3-none-any.whl has a file 'sxdata-1.0.data/scripts/../../../../../../tmp/escaped-script' outside its directory: refusing to install it"},
		{"sxbomb", "ERROR: Could not install packages due to an OSError: [Errno 51] No space left on device"},
	} {
		r := vmSh(t, h, "python3 -m pip install -i "+ix.url()+" "+tc.name+"; echo status $?; ls /tmp; find ~/.local 2>/dev/null | wc -l")
		if lastLine(r.stderr) != tc.msg || !strings.Contains(r.stdout, "status 1\n") || strings.Contains(r.stdout, "escaped") ||
			strings.Contains(r.stdout, "absolute") || !strings.HasSuffix(r.stdout, "\n0\n") {
			t.Errorf("%s: stdout\n%s\nstderr\n%s", tc.name, r.stdout, r.stderr)
		}
	}
	r := vmSh(t, h, "python3 -m pip install -i "+ix.url()+" sxsrc")
	if r.exit.Code != 1 || r.stderr != "ERROR: Could not find a version that satisfies the requirement sxsrc (from versions: none)\n"+
		"ERROR: sxsrc has only source distributions on the index (1.0): secexec's pip installs wheels only "+
		"(building needs a compiler and subprocesses WASI lacks)\nERROR: No matching distribution found for sxsrc\n" {
		t.Errorf("sdist: %d\n%s", r.exit.Code, r.stderr)
	}
	// An installed distribution whose RECORD names files outside its
	// environment: uninstall removes its own files and leaves those.
	site := "/home/user/.local/lib/python3.12/site-packages"
	ctx := context.Background()
	for p, body := range map[string]string{
		site + "/sxrm.py":                     "x = 1\n",
		site + "/sxrm-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: sxrm\nVersion: 1.0\n",
		site + "/sxrm-1.0.dist-info/RECORD":   "sxrm.py,,\n../../../../.profile,,\n/workspace/keep.txt,,\nsxrm-1.0.dist-info/METADATA,,\nsxrm-1.0.dist-info/RECORD,,\n",
		"/home/user/.profile":                 "# mine\n",
		"/workspace/keep.txt":                 "mine\n",
	} {
		if err := h.MkdirAll(ctx, filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(ctx, p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = vmSh(t, h, "python3 -m pip uninstall -y sxrm; cat ~/.profile /workspace/keep.txt; ls "+site)
	if r.exit.Code != 0 || r.stdout != "Found existing installation: sxrm 1.0\nUninstalling sxrm-1.0:\n  Successfully uninstalled sxrm-1.0\n# mine\nmine\n" ||
		r.stderr != "WARNING: Not removing /home/user/.profile: it is outside the environment\n"+
			"WARNING: Not removing /workspace/keep.txt: it is outside the environment\n" {
		t.Errorf("uninstall outside: %d\n%s\n%s", r.exit.Code, r.stdout, r.stderr)
	}
	// The VM is fine afterwards.
	if r := vmSh(t, h, "echo ok > /tmp/after && cat /tmp/after"); r.stdout != "ok\n" {
		t.Fatalf("after: %q %q", r.stdout, r.stderr)
	}
}

// threading.Thread.start fails with a RuntimeError that says why; the
// rest of threading (locks, current_thread, local) works.
func TestPythonThreadsError(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	prog := `import threading, concurrent.futures
lock = threading.Lock()
with lock:
    print("lock", lock.locked(), threading.current_thread().name, threading.active_count())
try:
    threading.Thread(target=print).start()
except RuntimeError as e:
    print("Thread", e)
try:
    concurrent.futures.ThreadPoolExecutor(2).submit(print, 1)
except ImportError as e:  # the build leaves out concurrent.futures.thread
    print("Executor", type(e).__name__, e)
t = threading.Thread(target=print)
t._started.set()
try:
    t.start()
except RuntimeError as e:
    print("again", e)
threading.Thread(target=print).start()
`
	r := run(t, h, "", "python3", "-c", prog)
	msg := "can't start new thread: python3 in secexec (CPython for WASI) has no threads; run the work in the main thread, or in another process with subprocess"
	want := "lock True MainThread 1\nThread " + msg + "\nExecutor ModuleNotFoundError No module named 'concurrent.futures.thread'\nagain threads can only be started once\n"
	if r.stdout != want || r.exit.Code != 1 || lastLine(r.stderr) != "RuntimeError: "+msg {
		t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", r.exit.Code, r.stdout, r.stderr)
	}
}

// pipOracleProgram compares secexec's pip's PEP 440 versions and
// specifiers and PEP 508 markers with the packaging library vendored in
// host pip, on the host's interpreter (argv[1] is the directory holding
// _secexec_pip.py). Extras are compared in normalized form: pip 23.0's
// packaging 21.3 predates PEP 685's normalization of extra names, which
// secexec's pip applies (as newer pip does).
const pipOracleProgram = `import sys
sys.path.insert(0, sys.argv[1])
import _secexec_pip as mine
from pip._vendor.packaging.specifiers import SpecifierSet
from pip._vendor.packaging.version import Version
from pip._vendor.packaging.markers import Marker
versions = ["0.9", "1.0.dev1", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.0", "1.0+local.1", "1.0.post1", "1.0.post1.dev2",
            "1.1", "1.1.dev1", "1.2.0", "1.2.1", "1.2.5", "1.3", "2.0", "2.0b1", "1!0.5", "1.7", "1.7.post1", "1.7.1", "1.7+x"]
specs = ["==1.0", "==1.0.0", "!=1.0", ">=1.0", "<=1.0", ">1.0", "<1.1", "~=1.2.0", "~=1.2", "==1.*", "!=1.*", "==1.0+local.1",
         ">1.7", "<2.0", ">=1.0a1", "===1.0", "<1.0.post1", ">1.0.post1", "==1!0.5", "<=1.7", ">=1.7.post1", "~=1.0.dev1", "==1.0.*"]
bad = 0
for sp in specs:
    op, val = mine._SPEC_RE.fullmatch(sp).groups()
    for v in versions:
        want = SpecifierSet(sp).contains(v, prereleases=True)
        got = mine.Specifier(op, val).contains(mine.Version(v))
        if want != got:
            bad += 1
            print("specifier", sp, v, "packaging", want, "mine", got)
order = sorted(versions, key=Version)
if sorted(versions, key=lambda v: mine.Version(v).key) != order:
    bad += 1
    print("order", sorted(versions, key=lambda v: mine.Version(v).key), order)
markers = ["python_version >= '3'", "python_version < '3.8'", "sys_platform == 'win32'", "sys_platform != 'win32'",
           "os_name == 'posix' and python_full_version >= '3.6.1'", "extra == 'more'", "extra == 'more-stuff'",
           "(python_version > '2.7' or extra == 'x') and platform_system != 'Windows'", "'linux' in sys_platform",
           "'win' not in sys_platform", "implementation_name == 'cpython'", "platform_python_implementation != 'PyPy'",
           "python_version ~= '3.1'", "python_version != '2.7'"]
for m in markers:
    for extra in ("", "more", "more-stuff"):
        want = Marker(m).evaluate({"extra": extra})
        got = mine.evaluate_marker(m, extra)
        if want != got:
            bad += 1
            print("marker", m, repr(extra), "packaging", want, "mine", got)
print("mismatches", bad)
`

func TestPipVersionsAndMarkersMatchPackaging(t *testing.T) {
	src, err := os.ReadFile("../_secexec_pip.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "_secexec_pip.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := hostPythonArgs(t, hostPip, "-c", pipOracleProgram, dir)
	if code != 0 || out != "mismatches 0\n" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}
