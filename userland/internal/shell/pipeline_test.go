package shell

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSimpleStages runs pipelines whose stages take the shortcuts (a
// shallow subshell, an early echo, a blocking pipe) on the host, next to
// stages that do not, and compares the output with host bash's. Run with
// -race it also checks that stages sharing the shell's tables only read
// them while they run side by side.
func TestSimpleStages(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("host bash is the oracle: %v", err)
	}
	script := `x=outer
trap 'echo "exit trap once"' EXIT
echo hello | wc -c
echo a b | cat | cat | wc -w
pwd | cat
: | cat
echo gone | false
echo "status $?"
cd / | cat
echo "x=$x"
f() { echo "f $1"; }
f one | cat
echo two | while read l; do echo "read $l"; y=$l; done
echo "y=${y-unset}"
echo three | { read z; echo "z=$z"; }
printf '%s\n' four | cat
echo five 2>&1 | cat
echo "$x" | cat
for i in 1 2 3; do echo "$i" | cat; done | wc -l
shopt -s lastpipe
echo six | read w
echo "w=$w"
`
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, path)
	cmd.Dir = dir
	want, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("host bash: %v\n%s", err, want)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r)
		done <- b.Bytes()
	}()
	// The host's System gives children the process's own 0-2, as the
	// WebAssembly build does.
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	sh := New("bash", NewSystem(), []string{"PATH=" + os.Getenv("PATH")}, dir)
	sh.Stdio(nil, w, w)
	sh.SetArgs(path, nil)
	status := sh.RunSource(script)
	os.Stdout, os.Stderr = stdout, stderr
	w.Close()
	got := <-done
	if status != 0 || !bytes.Equal(got, want) {
		t.Errorf("status %d, output:\n%s\nhost bash:\n%s", status, got, want)
	}
}
