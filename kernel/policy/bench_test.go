package policy

import (
	"strings"
	"testing"
)

// benchChecker is a policy shaped like what the CLI and an agent platform
// produce: a few tree grants, a glob or two, carve-outs.
func benchChecker(t testing.TB) *Checker {
	p := DenyAll().
		AllowRead("/usr", "/lib", "/etc/ssl").
		AllowFS(nil, "/workspace/**", "/tmp/**").
		DenyFS([]FSOp{FSWrite}, "/workspace/.git/**", "/workspace/**/*.lock").
		AllowFS([]FSOp{FSWrite}, "/workspace/**/*.go").
		AllowNet("*.example.com:443", "10.0.0.0/8:5432", "[::1]:8000-9000").
		AllowExec("git", "node", "/usr/bin/*").
		AllowEnv("HOME", "PATH", "LC_*").
		AllowTool("fs.*", "search")
	return mustCompile(t, p)
}

func BenchmarkCheckFS(b *testing.B) {
	c := benchChecker(b)
	cases := []struct {
		name string
		op   FSOp
		path string
	}{
		{"tree", FSRead, "/usr/lib/node_modules/x/index.js"},
		{"glob", FSWrite, "/workspace/src/app/main.go"},
		{"denied", FSWrite, "/home/user/.ssh/id_rsa"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.CheckFS(tc.op, tc.path)
			}
		})
	}
}

func BenchmarkCheckNet(b *testing.B) {
	c := benchChecker(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.CheckNet(NetConnect, "api.example.com", 443)
	}
}

func BenchmarkCheckExec(b *testing.B) {
	c := benchChecker(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.CheckExec("/usr/bin/git")
	}
}

func BenchmarkCheckEnv(b *testing.B) {
	c := benchChecker(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.CheckEnv("LC_ALL")
	}
}

// BenchmarkPathological is the worst shape for a backtracking matcher.
func BenchmarkPathological(b *testing.B) {
	c := mustCompile(b, DenyAll().AllowFS(nil, "/"+strings.Repeat("**/a/", 30)+"*c"))
	path := "/" + strings.Repeat("a/", 2000) + "b"
	b.ReportAllocs()
	for b.Loop() {
		_ = c.CheckFS(FSRead, path)
	}
}

// BenchmarkCheckFSRelocate is the check of every guest rename and link:
// a directory compares every op over both subtrees.
func BenchmarkCheckFSRelocate(b *testing.B) {
	c := benchChecker(b)
	for _, tc := range []struct {
		name string
		tree bool
	}{{"file", false}, {"dir", true}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.CheckFSRelocate(FSRename, "/workspace/src/app", "/workspace/lib/app2", tc.tree); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
