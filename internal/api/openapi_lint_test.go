package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/npmtest"
)

// lintDir copies doc and the linters' configuration (testdata/oaslint)
// into a temporary directory, as openapi.json so that the exceptions name
// it plainly, and returns it with the installed linters' node_modules.
func lintDir(t *testing.T, doc []byte) (dir, mods string) {
	t.Helper()
	mods = npmtest.Install(t, "testdata/oaslint", "oaslint-")
	dir = t.TempDir()
	files := map[string][]byte{"openapi.json": doc}
	for _, name := range []string{"redocly.yaml", ".redocly.lint-ignore.yaml", ".spectral.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata/oaslint", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, mods
}

// linter runs a linter's command from mods/.bin in dir, with neither
// telemetry nor update checks, so that it needs no network.
func linter(dir, mods, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(mods, ".bin", name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true",
		"NO_UPDATE_NOTIFIER=1", "DO_NOT_TRACK=1")
	return cmd
}

// redoclyProblems lints doc with redocly's recommended ruleset and
// returns every error and warning not excepted, with its reason, in
// testdata/oaslint/.redocly.lint-ignore.yaml.
func redoclyProblems(t *testing.T, doc []byte) []string {
	t.Helper()
	dir, mods := lintDir(t, doc)
	out, err := linter(dir, mods, "redocly", "lint", "openapi.json", "--config", "redocly.yaml", "--format", "json").Output()
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("redocly lint: %v (%v)\n%s", jerr, err, out)
	}
	var problems []string
	for _, p := range report.Problems {
		if p.Severity != "off" && p.Severity != "ignore" {
			problems = append(problems, fmt.Sprintf("redocly %s %s at %v: %s", p.Severity, p.RuleID, p.Location, p.Message))
		}
	}
	if len(problems) == 0 && (report.Totals.Errors+report.Totals.Warnings > 0 || err != nil) {
		problems = append(problems, fmt.Sprintf("redocly lint: %d errors, %d warnings (%v)", report.Totals.Errors, report.Totals.Warnings, err))
	}
	return problems
}

// spectralProblems lints doc with spectral's spectral:oas ruleset
// (testdata/oaslint/.spectral.yaml, whose overrides say why) and returns
// every result, hints included.
func spectralProblems(t *testing.T, doc []byte) []string {
	t.Helper()
	dir, mods := lintDir(t, doc)
	cmd := linter(dir, mods, "spectral", "lint", "openapi.json", "--ruleset", ".spectral.yaml",
		"--format", "json", "--output", "results.json", "--fail-severity", "hint")
	out, err := cmd.CombinedOutput()
	b, rerr := os.ReadFile(filepath.Join(dir, "results.json"))
	if rerr != nil {
		t.Fatalf("spectral lint: %v (%v)\n%s", rerr, err, out)
	}
	var results []struct {
		Code     string `json:"code"`
		Message  string `json:"message"`
		Path     []any  `json:"path"`
		Severity int    `json:"severity"`
	}
	if jerr := json.Unmarshal(b, &results); jerr != nil {
		t.Fatalf("spectral lint: %v (%v)\n%s", jerr, err, b)
	}
	var problems []string
	for _, r := range results {
		problems = append(problems, fmt.Sprintf("spectral (severity %d) %s at %v: %s", r.Severity, r.Code, r.Path, r.Message))
	}
	if len(problems) == 0 && err != nil {
		problems = append(problems, fmt.Sprintf("spectral lint: %v\n%s", err, out))
	}
	return problems
}

// TestOpenAPILint fails on any problem either linter reports in
// openapi.json.
func TestOpenAPILint(t *testing.T) {
	for _, p := range redoclyProblems(t, api.OpenAPI) {
		t.Error(p)
	}
	for _, p := range spectralProblems(t, api.OpenAPI) {
		t.Error(p)
	}
}

// TestOpenAPILintCatchesProblems shows that both linters, with their
// exceptions, still report an operation without tags, an unused schema
// and a missing server list.
func TestOpenAPILintCatchesProblems(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "servers")
	delete(doc["paths"].(map[string]any)["/healthz"].(map[string]any)["get"].(map[string]any), "tags")
	doc["components"].(map[string]any)["schemas"].(map[string]any)["Unused"] = map[string]any{"type": "object"}
	bad, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for name, problems := range map[string][]string{"redocly": redoclyProblems(t, bad), "spectral": spectralProblems(t, bad)} {
		for _, want := range []string{"tag", "Unused", "ervers"} {
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
				t.Errorf("%s did not report %q: %q", name, want, problems)
			}
		}
	}
}

// TestGeneratedClient drives a real `secexec serve` with openapi-fetch, a
// standard client that knows the API only through openapi.json's paths
// and parameters (testdata/genclient/client.mjs), and checks that every
// operation but the streaming ones answered as documented: a generated
// client reaches nested files, passes a permissions policy, and so on.
func TestGeneratedClient(t *testing.T) {
	// ESM resolves packages from the script's directory: the script runs
	// beside a link to the cached node_modules.
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/genclient/client.mjs")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "client.mjs"), src, 0o644)
	}
	if err == nil {
		err = os.Symlink(npmtest.Install(t, "testdata/genclient", "genclient-"), filepath.Join(dir, "node_modules"))
	}
	if err != nil {
		t.Fatal(err)
	}
	addr := startServe(t, "--snapshot-dir", t.TempDir())
	node := exec.CommandContext(t.Context(), "node", "client.mjs")
	node.Dir = dir
	node.Env = append(node.Environ(), "SECEXEC_URL=http://"+addr, "TOKEN="+docToken)
	node.Stderr = &strings.Builder{}
	out, err := node.Output()
	if err != nil {
		t.Fatalf("the generated client: %v\n%s%s", err, out, node.Stderr)
	}
	var called []string
	if err := json.Unmarshal(out, &called); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	doc, _ := loadDoc(t)
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			op := m + " " + p
			streaming := strings.HasSuffix(p, "/ws") || strings.HasSuffix(p, "/watch") ||
				strings.Contains(p, "/ports/") || strings.HasPrefix(p, "/p/")
			if !streaming && !slices.Contains(called, op) {
				t.Errorf("the generated client did not call %s", op)
			}
		}
	}
}
