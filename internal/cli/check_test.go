package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --check type-checks a TypeScript file in the VM first: type errors
// are reported at the host file's line and column and it does not run
// (exit 2); a file without errors runs.
func TestRunCheck(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.ts")
	src := "import { readFileSync } from \"node:fs\";\n\nconst n: number = \"forty-two\";\nconsole.log(\"ran\", n, readFileSync.name);\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "run", "--check", bad)
	want := bad + ":3:7 - error TS2322: Type 'string' is not assignable to type 'number'.\nFound 1 error.\n"
	if code != 2 || out != "" || errOut != want {
		t.Fatalf("run --check bad.ts: exit %d\nstdout %q\nstderr %q\nwant %q", code, out, errOut, want)
	}
	good := filepath.Join(dir, "good.ts")
	if err := os.WriteFile(good, []byte(strings.Replace(src, `"forty-two"`, "42", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "run", "--check", good)
	if code != 0 || out != "ran 42 readFileSync\n" || errOut != "" {
		t.Fatalf("run --check good.ts: exit %d %q %q", code, out, errOut)
	}
}
