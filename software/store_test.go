package software_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/secexec/secexec/software"
	"github.com/secexec/secexec/software/internal/aospkgtest"
)

// Tests that fetch through npm share one cache directory across runs, so
// only the first run downloads.
var sharedCache = filepath.Join(os.TempDir(), "secexec-test-software")

// helperEnv makes the test binary act as a second process installing a
// package (see TestConcurrentInstall): "DIR|NAME".
const helperEnv = "SECEXEC_SOFTWARE_TEST_HELPER"

func TestMain(m *testing.M) {
	if v := os.Getenv(helperEnv); v != "" {
		dir, name, _ := strings.Cut(v, "|")
		s, err := software.Open(context.Background(), software.Options{Dir: dir})
		if err == nil {
			err = s.Ensure(context.Background(), name)
			s.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openStore(t *testing.T, opts software.Options) *software.Store {
	t.Helper()
	s, err := software.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sharedStore returns a store over the shared cache with names installed.
func sharedStore(t *testing.T, names ...string) *software.Store {
	t.Helper()
	s := openStore(t, software.Options{Dir: sharedCache, Progress: software.ProgressWriter(testWriter{t})})
	if err := s.Ensure(context.Background(), names...); err != nil {
		t.Fatal(err)
	}
	return s
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// copyCache copies the named packages' files from the shared cache into a
// new directory.
func copyCache(t *testing.T, names ...string) string {
	t.Helper()
	sharedStore(t, names...)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "packages"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range software.DefaultPins() {
		if !slices.Contains(names, p.Name()) {
			continue
		}
		for _, ext := range []string{".aospkg", ".json"} {
			rel := filepath.Join("packages", p.Name()+"@"+p.Version+ext)
			b, err := os.ReadFile(filepath.Join(sharedCache, rel))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func commandNames(cmds []software.Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return out
}

func TestDefaultPins(t *testing.T) {
	want := map[string]string{
		"coreutils": "0.3.4", "sed": "0.3.4", "gawk": "0.3.4", "findutils": "0.3.4",
		"diffutils": "0.3.4", "tar": "0.3.5", "gzip": "0.3.4", "grep": "0.3.4",
	}
	got := map[string]string{}
	for _, p := range software.DefaultPins() {
		if !strings.HasPrefix(p.Package, "@agentos-software/") || !strings.HasPrefix(p.Integrity, "sha512-") {
			t.Errorf("pin %+v", p)
		}
		if p.Spec() != p.Package+"@"+p.Version {
			t.Errorf("Spec() = %q", p.Spec())
		}
		got[p.Name()] = p.Version
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pins = %v, want %v", got, want)
	}
	// Open validates them; an empty cache needs no network.
	s := openStore(t, software.Options{Dir: t.TempDir()})
	if len(s.Installed()) != 0 || len(s.Commands()) != 0 || len(s.Pins()) != len(want) {
		t.Error("an empty cache has packages")
	}
}

func TestDefaultDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(software.EnvDir, dir)
	if got, err := software.DefaultDir(); err != nil || got != dir {
		t.Errorf("DefaultDir() = %q, %v; want %q", got, err, dir)
	}
	if s := openStore(t, software.Options{}); s.Dir() != dir {
		t.Errorf("Dir() = %q, want %q from %s", s.Dir(), dir, software.EnvDir)
	}
	other := t.TempDir()
	if s := openStore(t, software.Options{Dir: other}); s.Dir() != other {
		t.Errorf("Options.Dir did not override the environment: %q", s.Dir())
	}
	t.Setenv(software.EnvDir, "")
	if got, err := software.DefaultDir(); err == nil && !strings.HasSuffix(got, filepath.Join("secexec", "software")) {
		t.Errorf("DefaultDir() = %q", got)
	}
}

func TestUnknownPackage(t *testing.T) {
	s := openStore(t, software.Options{Dir: t.TempDir()})
	for _, name := range []string{"jq", "@agentos-software/jq", "@evil/sed", "sed@0.3.4", ""} {
		if err := s.Ensure(context.Background(), name); !errors.Is(err, software.ErrUnknownPackage) {
			t.Errorf("Ensure(%q) = %v, want ErrUnknownPackage", name, err)
		}
	}
}

// TestFetchSmallPackages fetches real packages through npm and checks what
// the store makes of them.
func TestFetchSmallPackages(t *testing.T) {
	s := openStore(t, software.Options{Dir: sharedCache, Progress: software.ProgressWriter(testWriter{t})})
	// Install (not Ensure) re-hashes cached copies, so this also covers
	// verification of an existing cache.
	if err := s.Install(context.Background(), "sed", "grep", "diffutils", "@agentos-software/tar", "gzip"); err != nil {
		t.Fatal(err)
	}
	var installed []string
	for _, p := range s.Installed() {
		installed = append(installed, p.Name()+"@"+p.Version)
		if p.Manifest.Name != p.Name() || p.Manifest.Version != p.Version || p.Size == 0 {
			t.Errorf("package %+v", p)
		}
	}
	for _, want := range []string{"sed@0.3.4", "diffutils@0.3.4", "tar@0.3.5", "gzip@0.3.4", "grep@0.3.4"} {
		if !slices.Contains(installed, want) {
			t.Errorf("Installed() = %v, missing %s", installed, want)
		}
	}
	names := commandNames(s.Commands())
	for _, want := range []string{"sed", "egrep", "fgrep", "diff", "tar", "gzip", "gunzip", "zcat"} {
		if !slices.Contains(names, want) {
			t.Errorf("Commands() = %v, missing %s", names, want)
		}
	}
	if _, ok := s.Command("grep"); ok {
		t.Error(`the published grep package has no "grep" command`)
	}
	for _, name := range []string{"sed", "egrep", "diff", "tar", "gzip"} {
		c, ok := s.Command(name)
		if !ok {
			t.Fatalf("Command(%q) missing", name)
		}
		b, err := c.Module()
		if err != nil {
			t.Fatalf("%s: Module(): %v", name, err)
		}
		if !bytes.HasPrefix(b, []byte("\x00asm")) || int64(len(b)) != c.Size || software.FingerprintOf(b) != c.Fingerprint {
			t.Errorf("%s: module of %d bytes, magic %q, size %d", name, len(b), b[:4], c.Size)
		}
		if c.Entry != "bin/"+name {
			t.Errorf("%s: entry %q", name, c.Entry)
		}
	}
	// One module serves gzip, gunzip and zcat.
	gz, _ := s.Command("gzip")
	for _, alias := range []string{"gunzip", "zcat"} {
		if c, _ := s.Command(alias); c.Fingerprint != gz.Fingerprint || c.Package != "gzip" {
			t.Errorf("%s: fingerprint %s, gzip %s", alias, c.Fingerprint, gz.Fingerprint)
		}
	}
	b, err := s.Module(gz.Fingerprint)
	if err != nil || software.FingerprintOf(b) != gz.Fingerprint {
		t.Errorf("Module(gzip fingerprint): %v", err)
	}
	if p := s.Provides(); len(p.Env) != 0 || len(p.Files) != 0 {
		t.Errorf("Provides() = %+v, want nothing", p)
	}
}

// TestCoreutils fetches the 29 MB coreutils package once per cache.
func TestCoreutils(t *testing.T) {
	s := sharedStore(t, "coreutils")
	var cmds []software.Command
	for _, c := range s.Commands() {
		if c.Package == "coreutils" {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) != 118 {
		t.Errorf("coreutils has %d commands, want 118", len(cmds))
	}
	distinct := map[software.Fingerprint]bool{}
	for _, c := range cmds {
		distinct[c.Fingerprint] = true
	}
	if len(distinct) != 101 {
		t.Errorf("coreutils has %d distinct modules, want 101", len(distinct))
	}
	same := [][]string{{"[", "test"}, {"sh", "bash"}, {"cat", "more"}, {"ls", "dir", "vdir"},
		{"chcon", "chroot", "groups", "hostid", "install", "pinky", "runcon", "stty", "sync", "tty", "uptime", "users", "who"}}
	for _, group := range same {
		first, _ := s.Command(group[0])
		for _, name := range group[1:] {
			if c, ok := s.Command(name); !ok || c.Fingerprint != first.Fingerprint {
				t.Errorf("%s and %s should share a module", group[0], name)
			}
		}
	}
	if ls, _ := s.Command("ls"); ls.Fingerprint == (software.Fingerprint{}) {
		t.Error("ls has no fingerprint")
	} else if b, err := ls.Module(); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("ls module: %v", err)
	}
}

// TestIntegrityMismatch fetches a real package under a pin with another
// package's hash: the store must refuse it and keep nothing.
func TestIntegrityMismatch(t *testing.T) {
	pins := software.DefaultPins()
	var sed, gzip software.Pin
	for _, p := range pins {
		switch p.Name() {
		case "sed":
			sed = p
		case "gzip":
			gzip = p
		}
	}
	bad := software.Pin{Package: sed.Package, Version: sed.Version, Integrity: gzip.Integrity}
	dir := t.TempDir()
	s := openStore(t, software.Options{Dir: dir, Pins: []software.Pin{bad}})
	err := s.Install(context.Background(), "sed")
	var ie *software.IntegrityError
	if !errors.Is(err, software.ErrIntegrity) || !errors.As(err, &ie) {
		t.Fatalf("Install = %v, want IntegrityError", err)
	}
	if ie.Got != sed.Integrity || ie.Want != gzip.Integrity || ie.Spec != sed.Spec() {
		t.Errorf("IntegrityError = %+v", ie)
	}
	if len(s.Installed()) != 0 || len(s.Commands()) != 0 {
		t.Error("package installed despite the mismatch")
	}
	for _, sub := range []string{"packages", "tmp"} {
		ents, _ := os.ReadDir(filepath.Join(dir, sub))
		if len(ents) != 0 {
			t.Errorf("%s/ holds %d files after a failed install", sub, len(ents))
		}
	}
}

func TestFetchErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("npm missing", func(t *testing.T) {
		s := openStore(t, software.Options{Dir: t.TempDir(), NPM: filepath.Join(t.TempDir(), "npm")})
		err := s.Ensure(ctx, "sed")
		var fe *software.FetchError
		if !errors.Is(err, software.ErrFetch) || !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) || !errors.As(err, &fe) {
			t.Errorf("Ensure = %v, want FetchError for a missing npm", err)
		}
	})
	t.Run("npm fails", func(t *testing.T) {
		falseBin, err := exec.LookPath("false")
		if err != nil {
			t.Fatal(err)
		}
		s := openStore(t, software.Options{Dir: t.TempDir(), NPM: falseBin})
		var ee *exec.ExitError
		if err := s.Ensure(ctx, "sed"); !errors.Is(err, software.ErrFetch) || !errors.As(err, &ee) {
			t.Errorf("Ensure = %v, want FetchError wrapping an exit status", err)
		}
	})
	t.Run("no such version", func(t *testing.T) {
		pin := software.DefaultPins()[1]
		pin.Version = "999.0.0"
		s := openStore(t, software.Options{Dir: t.TempDir(), Pins: []software.Pin{pin}})
		err := s.Ensure(ctx, "sed")
		var fe *software.FetchError
		if !errors.As(err, &fe) || fe.Stderr == "" || !strings.Contains(err.Error(), "999.0.0") {
			t.Errorf("Ensure = %v, want FetchError carrying npm's message", err)
		}
		t.Log(err)
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		s := openStore(t, software.Options{Dir: t.TempDir()})
		if err := s.Ensure(cctx, "sed"); !errors.Is(err, context.Canceled) {
			t.Errorf("Ensure = %v, want context.Canceled", err)
		}
	})
}

// TestOffline uses a cache filled earlier with npm nowhere on PATH.
func TestOffline(t *testing.T) {
	dir := copyCache(t, "sed", "gzip")
	t.Setenv("PATH", t.TempDir())
	if _, err := exec.LookPath("npm"); err == nil {
		t.Fatal("npm still on PATH")
	}
	s := openStore(t, software.Options{Dir: dir})
	if err := s.Ensure(context.Background(), "sed", "gzip"); err != nil {
		t.Fatalf("Ensure offline: %v", err)
	}
	if err := s.Install(context.Background(), "sed"); err != nil {
		t.Fatalf("Install (verify) offline: %v", err)
	}
	c, ok := s.Command("zcat")
	if !ok {
		t.Fatal("zcat missing")
	}
	if b, err := c.Module(); err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Errorf("zcat module: %v", err)
	}
	// Nothing was written: a read-only cache would have worked too.
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != "packages" {
		t.Errorf("using a filled cache wrote to it: %v", ents)
	}
	if err := s.Ensure(context.Background(), "tar"); !errors.Is(err, software.ErrFetch) || !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("Ensure(tar) without npm = %v, want ErrFetch/exec.ErrNotFound", err)
	}

}

// TestRepair damages a cached real package; Install notices and fetches it
// again.
func TestRepair(t *testing.T) {
	dir := copyCache(t, "diffutils")
	name := filepath.Join(dir, "packages", "diffutils@0.3.4.aospkg")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-2000] ^= 0xff // inside the diff module
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, software.Options{Dir: dir})
	c, _ := s.Command("diff")
	if _, err := c.Module(); !errors.Is(err, software.ErrCorrupt) {
		t.Fatalf("damaged module: %v, want ErrCorrupt", err)
	}
	if err := s.Install(context.Background(), "diffutils"); err != nil {
		t.Fatal(err)
	}
	c, _ = s.Command("diff")
	if m, err := c.Module(); err != nil || !bytes.HasPrefix(m, []byte("\x00asm")) {
		t.Errorf("after repair: %v", err)
	}
}

// TestConcurrentInstall installs one package into an empty cache from two
// processes and from goroutines of two stores in this one, all at once.
func TestConcurrentInstall(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var procs []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+dir+"|diffutils")
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, out)
	}
	a := openStore(t, software.Options{Dir: dir})
	b := openStore(t, software.Options{Dir: dir})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, s := range []*software.Store{a, a, b, b} {
		wg.Go(func() { errs <- s.Ensure(ctx, "diffutils") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process %d: %v: %s", i, err, outs[i])
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, "packages"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Errorf("packages/ holds %d files, want 2", len(ents))
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("tmp/ holds %d leftovers", len(tmp))
	}
	c := openStore(t, software.Options{Dir: dir})
	if err := c.Install(ctx, "diffutils"); err != nil {
		t.Errorf("re-verifying the result: %v", err)
	}
	if cmd, ok := c.Command("diff"); !ok {
		t.Error("diff missing")
	} else if _, err := cmd.Module(); err != nil {
		t.Error(err)
	}
}

func TestRegister(t *testing.T) {
	s := openStore(t, software.Options{Dir: copyCache(t, "sed")})
	mod := aospkgtest.WasmModule("mytool")
	c, err := s.Register("mytool", mod)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "mytool" || c.Package != "" || c.Entry != "" || c.Size != int64(len(mod)) || c.Fingerprint != software.FingerprintOf(mod) {
		t.Errorf("Register = %+v", c)
	}
	mod[len(mod)-1] = 'X' // the store keeps its own copy
	got, ok := s.Command("mytool")
	if b, err := got.Module(); !ok || err != nil || software.FingerprintOf(b) != c.Fingerprint {
		t.Errorf("Command(mytool).Module() = %q, %v", b, err)
	}
	b, _ := got.Module()
	b[0] = 'Z' // nor can callers change it through Module
	if b2, _ := got.Module(); b2[0] != 0 {
		t.Error("Module() returned the store's own slice")
	}

	// An alias with identical bytes shares the module.
	alias, err := s.Register("mytool2", aospkgtest.WasmModule("mytool"))
	if err != nil || alias.Fingerprint != c.Fingerprint {
		t.Errorf("alias: %+v, %v", alias, err)
	}
	if _, err := s.Module(c.Fingerprint); err != nil {
		t.Errorf("Module(fingerprint): %v", err)
	}

	// A registered module hides a package command until unregistered.
	if _, err := s.Register("sed", aospkgtest.WasmModule("my sed")); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Command("sed"); c.Package != "" {
		t.Errorf("registered sed does not shadow the package: %+v", c)
	}
	n := 0
	for _, c := range s.Commands() {
		if c.Name == "sed" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("Commands() lists sed %d times", n)
	}
	if !s.Unregister("sed") || s.Unregister("sed") {
		t.Error("Unregister(sed) results")
	}
	if c, _ := s.Command("sed"); c.Package != "sed" {
		t.Errorf("after Unregister, sed = %+v", c)
	}

	for _, name := range []string{"", ".", "..", "a/b", "a\x00b", "\xff", strings.Repeat("x", 256)} {
		if _, err := s.Register(name, mod); !errors.Is(err, software.ErrInvalidName) {
			t.Errorf("Register(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	for _, bad := range [][]byte{nil, []byte("\x00as"), []byte("#!/bin/sh\n")} {
		if _, err := s.Register("x", bad); !errors.Is(err, software.ErrNotWasm) {
			t.Errorf("Register(%q) = %v, want ErrNotWasm", bad, err)
		}
	}
	if _, err := s.Module(software.Fingerprint{}); !errors.Is(err, software.ErrNotFound) {
		t.Errorf("Module(zero) = %v", err)
	}
	if _, err := (software.Command{}).Module(); !errors.Is(err, software.ErrNotFound) {
		t.Errorf("zero Command Module() = %v", err)
	}
}

func TestClosed(t *testing.T) {
	s, err := software.Open(context.Background(), software.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Ensure(context.Background(), "sed"); !errors.Is(err, software.ErrClosed) {
		t.Errorf("Ensure after Close = %v", err)
	}
	if _, err := s.Register("x", aospkgtest.WasmModule("x")); !errors.Is(err, software.ErrClosed) {
		t.Errorf("Register after Close = %v", err)
	}
}

func TestProgressWriter(t *testing.T) {
	var buf bytes.Buffer
	w := software.ProgressWriter(&buf)
	for _, e := range []software.Event{
		{Package: "sed", Version: "0.3.4", Phase: software.PhaseFetching},
		{Package: "sed", Version: "0.3.4", Phase: software.PhaseVerifying, Total: 10},
		{Package: "sed", Version: "0.3.4", Phase: software.PhaseVerifying, Bytes: 10, Total: 10},
		{Package: "sed", Version: "0.3.4", Phase: software.PhaseUnpacking, Total: 20},
		{Package: "sed", Version: "0.3.4", Phase: software.PhaseDone},
	} {
		w(e)
	}
	want := "sed 0.3.4: fetching\nsed 0.3.4: verifying 10 bytes\nsed 0.3.4: unpacking 20 bytes\nsed 0.3.4: installed\n"
	if buf.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", buf.String(), want)
	}
}
