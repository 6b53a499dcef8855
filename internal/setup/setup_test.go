package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/js/bootjs"
	"github.com/secexec/secexec/software"
	userwasm "github.com/secexec/secexec/userland/wasm"
)

// Each cause of a failed set-up reads as one line that says what to do,
// and stays matchable with errors.Is / errors.As.
func TestErrorSaysHowToFix(t *testing.T) {
	notFound := &exec.Error{Name: "npm", Err: exec.ErrNotFound}
	cases := []struct {
		name  string
		err   *Error
		want  []string
		match []error
	}{
		{"npm missing for the userland", &Error{Step: stepUserland, Err: &software.FetchError{Spec: "@agentos-software/sed@0.3.4", Err: notFound}},
			[]string{"npm was not found on PATH", "install npm"}, []error{ErrNPMNotFound, exec.ErrNotFound, software.ErrFetch}},
		{"npm missing for the polyfills", &Error{Step: stepNode, Err: &bootjs.InstallError{Err: notFound}},
			[]string{"npm was not found on PATH", "install npm"}, []error{ErrNPMNotFound, bootjs.ErrInstall}},
		{"no registry", &Error{Step: stepUserland, Err: &software.FetchError{Spec: "@agentos-software/sed@0.3.4", Err: errors.New("exit status 1"), Stderr: "npm error code ECONNREFUSED\nnpm error request failed"}},
			[]string{"set-up of the userland packages failed", "ECONNREFUSED", "npm config get registry"}, []error{software.ErrFetch}},
		{"hash mismatch", &Error{Step: stepUserland, Err: &software.IntegrityError{Spec: "@agentos-software/sed@0.3.4", Want: "sha512-a", Got: "sha512-b"}},
			[]string{"refused a package", "sha512-a", "nothing from it was installed"}, []error{software.ErrIntegrity}},
		{"read-only cache", &Error{Step: stepDirs, Err: &fs.PathError{Op: "mkdir", Path: "/ro/cache", Err: fs.ErrPermission}},
			[]string{"cannot write its cache", "/ro/cache", "SECEXEC_CACHE_DIR"}, []error{fs.ErrPermission}},
		{"go missing for secexec's own commands", &Error{Step: stepOwn, Err: fmt.Errorf("%w on PATH", userwasm.ErrNoToolchain)},
			[]string{"needs Go", "apt-get install golang-go", userwasm.EnvDir}, []error{userwasm.ErrNoToolchain}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := c.err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message has several lines: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, target := range c.match {
				if !errors.Is(c.err, target) {
					t.Errorf("does not match %v", target)
				}
			}
			if len(c.match) > 0 && c.match[0] != ErrNPMNotFound && errors.Is(c.err, ErrNPMNotFound) {
				t.Error("matches ErrNPMNotFound with npm present")
			}
		})
	}
}

// The directories come from the environment, made absolute, and reach an
// engine through Env.
func TestDirsFromEnvironment(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(software.EnvDir, "sw")
	t.Setenv(EnvCacheDir, "cache")
	d, err := DefaultDirs()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if d.Software != filepath.Join(wd, "sw") || d.Cache != filepath.Join(wd, "cache") {
		t.Fatalf("dirs %+v", d)
	}
	env := strings.Join(d.Env(), " ")
	if want := filepath.Join(d.Cache, "userland") + string(filepath.Separator); !strings.HasPrefix(d.Userland, want) {
		t.Fatalf("userland dir %q, want one under %s", d.Userland, want)
	}
	if env != software.EnvDir+"="+d.Software+" "+EnvCacheDir+"="+d.Cache+" "+userwasm.EnvDir+"="+d.Userland {
		t.Fatalf("env %q", env)
	}
	// A prebuilt directory named by the environment is what engines get.
	t.Setenv(userwasm.EnvDir, "prebuilt")
	if d, err = DefaultDirs(); err != nil || d.Userland != filepath.Join(wd, "prebuilt") {
		t.Fatalf("with %s set: dirs %+v, %v", userwasm.EnvDir, d, err)
	}
	if d.WASM() != filepath.Join(d.Cache, "wasm") || d.JS() != filepath.Join(d.Cache, "js") {
		t.Fatalf("wasm %s js %s", d.WASM(), d.JS())
	}
}

// A cache directory that cannot be created fails the set-up with a typed
// error before anything is fetched.
func TestEnsureUnwritableCache(t *testing.T) {
	parent := t.TempDir()
	blocker := filepath.Join(parent, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Ensure(t.Context(), Options{Dirs: Dirs{Software: filepath.Join(blocker, "sw"), Cache: filepath.Join(blocker, "c")}, NPM: "/no/npm"})
	var se *Error
	if !errors.As(err, &se) || se.Step != stepDirs {
		t.Fatalf("Ensure under a file = %v, want an Error at step %q", err, stepDirs)
	}
}
