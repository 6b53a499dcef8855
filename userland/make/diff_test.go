//go:build !wasip1

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// GNU make is the reference; .ci/run installs it.
const hostMake = "/usr/bin/make"

// result is what one run printed and how it ended.
type result struct {
	stdout, stderr string
	code           int
}

// writeFixture creates a case's files in dir.
func writeFixture(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		mode := os.FileMode(0o644)
		if rest, ok := strings.CutPrefix(n, "+x "); ok {
			n, mode = rest, 0o755
		}
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[n]), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot lists the files under dir with their contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// script is the shell command line a case runs.
func (c diffCase) script() string {
	s := ""
	if c.pre != "" {
		s = c.pre + "\n"
	}
	s += "make " + c.args
	if c.post != "" {
		s += "\nrc=$?\n" + c.post + "\nexit $rc"
	}
	return s
}

// normalize hides what legitimately differs between two runs: the
// directory the case ran in.
func normalize(s, dir string) string {
	return strings.ReplaceAll(s, dir, "DIR")
}

// compare checks one case's results and trees.
func compare(t *testing.T, got, want result, gotTree, wantTree map[string]string) {
	t.Helper()
	if got.stdout != want.stdout {
		t.Errorf("stdout differs\n got: %q\nwant: %q", got.stdout, want.stdout)
	}
	if got.stderr != want.stderr {
		t.Errorf("stderr differs\n got: %q\nwant: %q", got.stderr, want.stderr)
	}
	if got.code != want.code {
		t.Errorf("exit = %d, want %d", got.code, want.code)
	}
	for k, v := range wantTree {
		if gv, ok := gotTree[k]; !ok {
			t.Errorf("%s: missing", k)
		} else if gv != v {
			t.Errorf("%s differs\n got: %q\nwant: %q", k, gv, v)
		}
	}
	for k := range gotTree {
		if _, ok := wantTree[k]; !ok {
			t.Errorf("%s: should not be there", k)
		}
	}
}

// shRun runs script in dir with /bin/sh, make found first in binDir.
func shRun(t *testing.T, dir, binDir, script string) result {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{normalize(out.String(), dir), normalize(errb.String(), dir), code}
}

// binWith makes a directory whose "make" is target.
func binWith(t *testing.T, target string) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Symlink(target, filepath.Join(d, "make")); err != nil {
		t.Fatal(err)
	}
	return d
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}

func checkHostMake(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(hostMake); err != nil {
		t.Fatalf("host GNU make (the reference; .ci/run installs it): %v", err)
	}
}

// TestDiffNative runs every case with this make built for the host and
// with GNU make, and compares: the quick loop for the parser and the
// evaluator (the VM test runs the same table in a VM).
func TestDiffNative(t *testing.T) {
	checkHostMake(t)
	exe := filepath.Join(t.TempDir(), "make")
	build := exec.Command("go", "build", "-o", exe, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hostBin, ourBin := binWith(t, hostMake), binWith(t, exe)
	for i, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			wd := filepath.Join(t.TempDir(), fmt.Sprintf("c%d", i))
			gd := filepath.Join(t.TempDir(), fmt.Sprintf("c%d", i))
			writeFixture(t, wd, c.files)
			writeFixture(t, gd, c.files)
			want := shRun(t, wd, hostBin, c.script())
			got := shRun(t, gd, ourBin, c.script())
			if c.stderrLines > 0 {
				got.stderr, want.stderr = firstLines(got.stderr, c.stderrLines), firstLines(want.stderr, c.stderrLines)
			}
			compare(t, got, want, snapshot(t, gd), snapshot(t, wd))
		})
	}
}
