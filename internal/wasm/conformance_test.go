package wasm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
)

// conformanceCase is one row of the agentOS ABI checklist (§14).
type conformanceCase struct {
	ID     string   `json:"id"`
	Argv   []string `json:"argv"`
	Stdout string   `json:"stdout"`
	Exit   int      `json:"exit"`
	Notes  string   `json:"notes"`
}

const conformanceFile = "agentos-conformance.json"

// loadConformance reads the checklist: the copy in testdata first, else
// the spec beside the repository (../shared/spec), found by walking up.
func loadConformance(t *testing.T) []conformanceCase {
	t.Helper()
	name := filepath.Join("testdata", conformanceFile)
	if _, err := os.Stat(name); err != nil {
		dir, _ := filepath.Abs(".")
		for {
			cand := filepath.Join(dir, "shared", "spec", conformanceFile)
			if _, err := os.Stat(cand); err == nil {
				name = cand
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				t.Fatalf("%s not found in testdata or any shared/spec above", conformanceFile)
			}
			dir = parent
		}
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var cases []conformanceCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 40 {
		t.Fatalf("%s: %d cases, want 40", name, len(cases))
	}
	return cases
}

// conformanceStderr is the stderr the checklist's notes give; every other
// case must print nothing there. T17's writer is killed by SIGPIPE, so it
// prints nothing either.
var conformanceStderr = map[string]string{
	"T05": "\x1b[31merror:\x1b[39m command not found: nosuchcmd\n",
	"T35": "not a tty\n",
}

// TestConformance runs the 40-case checklist of the agentOS ABI, each in
// a fresh VM, with exact stdout and exit status.
func TestConformance(t *testing.T) {
	for _, tc := range loadConformance(t) {
		t.Run(tc.ID, func(t *testing.T) {
			v := newVM(t, vm.Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			r := v.exec(ctx, tc.Argv, runOpts{})
			if r.timedOut {
				t.Fatalf("%q timed out; stdout %q stderr %q", tc.Argv[2], r.stdout, r.stderr)
			}
			if string(r.stdout) != tc.Stdout || r.code != tc.Exit {
				t.Errorf("%q:\nstdout %q\nstderr %q\nexit %d\nwant stdout %q exit %d (%s)",
					tc.Argv[2], r.stdout, r.stderr, r.code, tc.Stdout, tc.Exit, tc.Notes)
			}
			// stderr is empty unless the checklist gives it (§14).
			if want := conformanceStderr[tc.ID]; string(r.stderr) != want {
				t.Errorf("%q: stderr %q, want %q", tc.Argv[2], r.stderr, want)
			}
			if tc.ID == "T14" && time.Since(start) < 100*time.Millisecond {
				t.Errorf("sleep 0.1 returned after %v", time.Since(start))
			}
		})
	}
}
