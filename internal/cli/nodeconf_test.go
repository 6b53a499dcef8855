package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeconf runs a tree laid out like Node's test/ (tests written here,
// not Node's) in VMs and under the host's node as the control: a test the
// control fails is left out, one that needs --expose-internals is skipped,
// flags reach node, a test that fails in the VM counts and names its
// first error, and a listed test that fails is a regression (exit 1).
func TestNodeconf(t *testing.T) {
	control, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the control is the host's node (.ci/run installs it with npm): %v", err)
	}
	root := t.TempDir()
	for name, src := range map[string]string{
		"common/index.js":   "'use strict';\nmodule.exports = { tmp: process.env.NODE_TEST_DIR };\n",
		"fixtures/data.txt": "fixture\n",
		"parallel/test-demo-pass.js": "'use strict';\nconst common = require('../common');\nconst fs = require('fs');\n" +
			"require('assert').strictEqual(fs.readFileSync(__dirname + '/../fixtures/data.txt', 'utf8'), 'fixture\\n');\n" +
			"fs.writeFileSync(common.tmp + '/x', 'y');\n",
		"parallel/test-demo-flags.js": "// Flags: --no-warnings\n'use strict';\nrequire('../common');\n" +
			"require('assert').ok(process.execArgv.includes('--no-warnings'), process.execArgv.join(' '));\n",
		// Fails only in the VM, where the tree is at /node/test.
		"parallel/test-demo-fail.js":      "'use strict';\nrequire('../common');\nrequire('assert').notStrictEqual(__dirname, '/node/test/parallel');\n",
		"parallel/test-demo-internals.js": "// Flags: --expose-internals\n'use strict';\nrequire('internal/test/binding');\n",
		// Passes only where the tree is at /node/test: the control fails it.
		"parallel/test-demo-vmonly.js": "'use strict';\nrequire('../common');\nif (__dirname !== '/node/test/parallel') process.exit(1);\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(t.TempDir(), "passing.txt")
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, errOut := runCLI(t, "", "nodeconf", "--tests", root, "--control", control, "--expect", list, "--update", "--json", report, "--quiet")
	if code != 0 {
		t.Fatalf("nodeconf --update: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, "passed 2 of 3 = 66.7%\n") || !strings.Contains(out, `AssertionError [ERR_ASSERTION]: Expected "actual" to be strictly unequal to: 'PATH'`) {
		t.Fatalf("report:\n%s", out)
	}
	b, _ := os.ReadFile(list)
	if got := strings.Join(strings.Fields(strings.Join(nonComments(string(b)), " ")), " "); got != "test-demo-flags.js test-demo-pass.js" {
		t.Fatalf("passing list %q", got)
	}
	var rep struct {
		Outcomes []struct {
			Name    string `json:"name"`
			Pass    bool   `json:"pass"`
			Control *bool  `json:"control"`
			Skip    string `json:"skip"`
		} `json:"outcomes"`
	}
	raw, _ := os.ReadFile(report)
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Outcomes) != 5 {
		t.Fatalf("report %s: %v", raw, err)
	}
	for _, o := range rep.Outcomes {
		switch o.Name {
		case "test-demo-internals.js":
			if o.Skip == "" {
				t.Errorf("%s was not skipped", o.Name)
			}
		case "test-demo-vmonly.js":
			if o.Control == nil || *o.Control {
				t.Errorf("%s: control %v, want failed (left out)", o.Name, o.Control)
			}
		}
	}

	// A listed test that fails now is a regression.
	if err := os.WriteFile(list, []byte("# listed\ntest-demo-pass.js\ntest-demo-fail.js\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "nodeconf", "--tests", root, "--expect", list, "--quiet", "--run", "^test-demo-(pass|fail)")
	if code != 1 || !strings.Contains(errOut, "1 tests listed in") || !strings.Contains(errOut, "test-demo-fail.js") {
		t.Fatalf("regression: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", "nodeconf", "--tests", t.TempDir()); code == 0 || !strings.Contains(errOut, "no Node tests found") {
		t.Fatalf("empty tree: exit %d %q", code, errOut)
	}
}

func nonComments(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
