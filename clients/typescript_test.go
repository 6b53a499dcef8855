package clients_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/npmtest"
)

// tsDevTree installs the TypeScript package's dev dependencies (pinned
// by its package-lock.json) into the cache once.
func tsDevTree(t *testing.T) string {
	t.Helper()
	return npmtest.Install(t, "typescript", "ts-client-dev-")
}

// minTSTests is how many node:test tests the suite has: a lost file or
// an emptied test shows as fewer.
const minTSTests = 25

// testTypeScript checks the package with tsc --strict, packs it with
// npm, installs the tarball into a fresh project as a user would, and
// runs the node:test suite there against the server.
func testTypeScript(t *testing.T, s *server) {
	mods := tsDevTree(t)
	work := t.TempDir()
	copyTree(t, "typescript", work)
	if err := os.Symlink(mods, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "npm_config_update_notifier=false")

	// The sources and the tests, type-checked strictly; any error fails.
	run(t, work, env, "node", filepath.Join(mods, "typescript", "bin", "tsc"), "-p", "tsconfig.test.json", "--noEmit")

	// npm pack builds dist/ (prepack) and packs what package.json lists.
	packs := t.TempDir()
	out := []byte(run(t, work, env, "npm", "pack", "--json", "--pack-destination", packs, "--loglevel=error"))
	var packed []struct {
		Filename string `json:"filename"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if err := json.Unmarshal(out[bytes.IndexByte(out, '['):], &packed); err != nil || len(packed) != 1 {
		t.Fatalf("npm pack --json: %v\n%s", err, out)
	}
	var files []string
	for _, f := range packed[0].Files {
		files = append(files, f.Path)
	}
	if got, want := strings.Join(files, " "), "README.md dist/index.d.ts dist/index.js dist/schema.d.ts package.json"; got != want {
		t.Errorf("the package holds %s, want %s", got, want)
	}

	// Browsers load it as is: nothing of node's.
	dist, err := os.ReadFile(filepath.Join(work, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`\bfrom\s+"node:|\brequire\(|\bprocess\.(?:env|argv|exit|versions?|platform|nextTick|stdout|stderr)\b|\bBuffer\.|\bimport\(`).Find(dist); m != nil {
		t.Errorf("dist/index.js uses %q, which browsers lack", m)
	}

	// A user's project: the tarball installed with npm, ws (node 20 has
	// no global WebSocket) and the types the tests use from the pinned
	// dev tree; the tests are compiled there, strictly, against the
	// installed package's declarations.
	user := t.TempDir()
	for name, content := range map[string]string{
		"package.json":  `{"name": "secexec-client-user", "private": true, "type": "module"}`,
		"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "types": ["node"], "outDir": "out"}, "include": ["*.test.ts"]}`,
	} {
		if err := os.WriteFile(filepath.Join(user, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, user, env, "npm", "install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
		filepath.Join(packs, packed[0].Filename), filepath.Join(mods, "ws"), filepath.Join(mods, "@types", "ws"),
		filepath.Join(mods, "@types", "node"))
	tests, err := filepath.Glob(filepath.Join("typescript", "test", "*.test.ts"))
	if err != nil || len(tests) < 2 {
		t.Fatalf("tests: %v %v", tests, err)
	}
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(user, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, user, env, "node", filepath.Join(mods, "typescript", "bin", "tsc"), "-p", "tsconfig.json")
	var suite []string
	for _, f := range tests {
		if filepath.Base(f) != "websocket.test.ts" {
			suite = append(suite, filepath.Join("out", strings.TrimSuffix(filepath.Base(f), ".ts")+".js"))
		}
	}
	runNodeTests(t, user, s.env(), minTSTests, suite...)
	// The platform's WebSocket, on node 20 behind a flag (a no-op on 22).
	runNodeTests(t, user, s.env(), 1, "--experimental-websocket", filepath.Join("out", "websocket.test.js"))
}

// runNodeTests runs node --test with args in dir and checks that at
// least want tests passed and none failed.
func runNodeTests(t *testing.T, dir string, env []string, want int, args ...string) {
	t.Helper()
	args = append([]string{"--test", "--test-reporter=tap"}, args...)
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Env = env
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, res)
	}
	m := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindSubmatch(res)
	if m == nil || !bytes.Contains(res, []byte("\n# fail 0\n")) {
		t.Fatalf("unexpected output:\n%s", res)
	}
	if pass, _ := strconv.Atoi(string(m[1])); pass < want {
		t.Fatalf("only %d tests passed, want %d or more:\n%s", pass, want, res)
	}
	t.Logf("node --test: %s tests passed", m[1])
}

// TestTypeScriptSchemaFresh: the committed src/schema.d.ts is what the
// package's generate script makes from internal/api/openapi.json now, so
// the client's types cannot drift from the API (after a change to the
// document: cd clients/typescript && npm run generate).
func TestTypeScriptSchemaFresh(t *testing.T) {
	mods := tsDevTree(t)
	root := t.TempDir()
	pkg := filepath.Join(root, "clients", "typescript")
	copyTree(t, "typescript", pkg)
	if err := os.Symlink(mods, filepath.Join(pkg, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "internal", "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../internal/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "internal", "api", "openapi.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(pkg, "src", "schema.d.ts")); err != nil {
		t.Fatal(err)
	}
	run(t, pkg, append(os.Environ(), "npm_config_update_notifier=false"), "npm", "run", "--silent", "generate")
	fresh, err := os.ReadFile(filepath.Join(pkg, "src", "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("typescript/src/schema.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("clients/typescript/src/schema.d.ts is stale: run `npm run generate` in clients/typescript")
	}
}
