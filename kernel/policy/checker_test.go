package policy

import (
	"errors"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func mustCompile(t testing.TB, p *Policy) *Checker {
	t.Helper()
	c, err := Compile(p)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return c
}

// allChecks runs one representative check per domain and operation.
func allChecks(c *Checker) map[string]error {
	out := map[string]error{}
	for _, op := range AllFSOps() {
		out["fs "+string(op)] = c.CheckFS(op, "/tmp/x")
	}
	for _, op := range []NetOp{NetConnect, NetListen, NetDNS} {
		out["net "+string(op)] = c.CheckNet(op, "example.com", 443)
	}
	out["exec"] = c.CheckExec("ls")
	out["exec path"] = c.CheckExec("/bin/ls")
	out["env"] = c.CheckEnv("HOME")
	out["tool"] = c.CheckTool("fetch")
	return out
}

func TestDenyByDefault(t *testing.T) {
	var nilChecker *Checker
	cases := map[string]*Checker{
		"nil policy":  mustCompile(t, nil),
		"empty":       mustCompile(t, DenyAll()),
		"nil checker": nilChecker,
		// Rules in one domain grant nothing in another.
		"other domains only": mustCompile(t, &Policy{
			FS:    []FSRule{{Effect: Allow, Paths: []string{"/nothing/here"}}},
			Net:   []NetRule{{Effect: Allow, Hosts: []string{"other.example"}}},
			Exec:  []ExecRule{{Effect: Allow, Commands: []string{"cat"}}},
			Env:   []EnvRule{{Effect: Allow, Keys: []string{"PATH"}}},
			Tools: []ToolRule{{Effect: Allow, Names: []string{"search"}}},
		}),
		"only denies": mustCompile(t, DenyAll().DenyFS(nil, "/**").DenyNet("*").DenyExec("*").DenyEnv("*").DenyTool("*")),
	}
	for name, c := range cases {
		for check, err := range allChecks(c) {
			if !errors.Is(err, errno.EACCES) {
				t.Errorf("%s: %s: err=%v, want EACCES", name, check, err)
			}
		}
	}
}

func TestAllowAll(t *testing.T) {
	c := mustCompile(t, AllowAll())
	for check, err := range allChecks(c) {
		if err != nil {
			t.Errorf("%s: %v", check, err)
		}
	}
	// Still no bypass for malformed targets.
	for _, err := range []error{c.CheckFS(FSRead, "/a/../etc"), c.CheckFS(FSRead, "rel"), c.CheckFS(FSAll, "/a"),
		c.CheckNet(NetConnect, "bad host", 1), c.CheckNet("bogus", "a.b", 1), c.CheckExec("./x"), c.CheckEnv("A=B"),
		c.CheckTool("")} {
		if !errors.Is(err, errno.EACCES) {
			t.Errorf("malformed target allowed: %v", err)
		}
	}
}

func TestLastMatchWins(t *testing.T) {
	p := &Policy{FS: []FSRule{
		{Effect: Allow, Paths: []string{"/ws/**"}},                                    // 0
		{Effect: Deny, Ops: []FSOp{FSWrite}, Paths: []string{"/ws/.git/**"}},          // 1
		{Effect: Allow, Ops: []FSOp{FSWrite}, Paths: []string{"/ws/.git/COMMIT_MSG"}}, // 2
		{Effect: Deny, Paths: []string{"/ws/secret"}},                                 // 3
	}}
	c := mustCompile(t, p)
	tests := []struct {
		op   FSOp
		path string
		want bool
		rule int
	}{
		{FSRead, "/ws/a", true, 0},
		{FSWrite, "/ws/a", true, 0},
		{FSRead, "/ws/.git/config", true, 0},
		{FSWrite, "/ws/.git/config", false, 1},
		{FSWrite, "/ws/.git", false, 1},
		{FSWrite, "/ws/.git/COMMIT_MSG", true, 2},
		{FSRead, "/ws/secret", false, 3},
		{FSStat, "/ws/secret", false, 3},
		{FSRead, "/ws/secret/x", true, 0},
		{FSRead, "/other", false, -1},
	}
	for _, tt := range tests {
		err := c.CheckFS(tt.op, tt.path)
		if (err == nil) != tt.want {
			t.Errorf("%s %s: err=%v, want allowed=%v", tt.op, tt.path, err, tt.want)
		}
		var de *DeniedError
		if errors.As(err, &de) && de.Rule != tt.rule {
			t.Errorf("%s %s: rule %d, want %d", tt.op, tt.path, de.Rule, tt.rule)
		}
	}
	// Reversing the order reverses the outcome.
	c = mustCompile(t, DenyAll().DenyFS(nil, "/ws/secret").AllowFS(nil, "/ws/**"))
	if err := c.CheckFS(FSRead, "/ws/secret"); err != nil {
		t.Errorf("later allow should win: %v", err)
	}
	// The same holds in every domain.
	c = mustCompile(t, DenyAll().AllowNet("*").DenyNet("*.evil.example").
		AllowExec("*").DenyExec("rm").AllowEnv("*").DenyEnv("AWS_*").AllowTool("*").DenyTool("shell*"))
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{c.CheckNet(NetConnect, "a.evil.example", 1), false},
		{c.CheckNet(NetConnect, "evil.example", 1), true},
		{c.CheckExec("rm"), false},
		{c.CheckExec("/bin/rm"), false},
		{c.CheckExec("ls"), true},
		{c.CheckEnv("AWS_SECRET_ACCESS_KEY"), false},
		{c.CheckEnv("HOME"), true},
		{c.CheckTool("shell.run"), false},
		{c.CheckTool("fetch"), true},
	} {
		if (tt.err == nil) != tt.want {
			t.Errorf("got %v, want allowed=%v", tt.err, tt.want)
		}
	}
}

func TestFSOps(t *testing.T) {
	c := mustCompile(t, DenyAll().AllowRead("/data").AllowWrite("/tmp/").
		AllowFS([]FSOp{FSMount}, "/mnt/*").AllowFS([]FSOp{FSAll}, "/all/**"))
	for _, op := range AllFSOps() {
		isRead := op == FSRead || op == FSStat || op == FSReaddir
		if got := c.CheckFS(op, "/data/x/y") == nil; got != isRead {
			t.Errorf("/data %s: allowed=%v", op, got)
		}
		isWrite := !isRead && op != FSMount
		if got := c.CheckFS(op, "/tmp/x") == nil; got != isWrite {
			t.Errorf("/tmp %s: allowed=%v", op, got)
		}
		if got := c.CheckFS(op, "/mnt/disk") == nil; got != (op == FSMount) {
			t.Errorf("/mnt %s: allowed=%v", op, got)
		}
		if err := c.CheckFS(op, "/all/x"); err != nil {
			t.Errorf("/all %s: %v", op, err)
		}
	}
	if c.CheckFS(FSRead, "/database") == nil {
		t.Errorf("/data must not match /database")
	}
}

func TestTreePattern(t *testing.T) {
	for in, want := range map[string]string{
		"/":            "/**",
		"///":          "/**",
		"":             "",
		"/data":        "/data/**",
		"/data/":       "/data/**",
		"/data/*.csv":  "/data/*.csv",
		"/a/**":        "/a/**",
		`/a/x\*`:       `/a/x\*/**`,
		"/etc/hosts":   "/etc/hosts/**",
		"relative/dir": "relative/dir/**",
	} {
		if got := TreePattern(in); got != want {
			t.Errorf("TreePattern(%q) = %q, want %q", in, got, want)
		}
	}
	// An empty or relative CLI path is an error, never a grant.
	for _, p := range []string{"", "relative"} {
		if _, err := Compile(DenyAll().AllowRead(p)); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("AllowRead(%q): err=%v", p, err)
		}
	}
	// Builders with nothing to add add no rule.
	if p := DenyAll().AllowRead().AllowNet().AllowEnv().AllowExec().AllowTool(); len(p.FS)+len(p.Net)+len(p.Env)+len(p.Exec)+len(p.Tools) != 0 {
		t.Errorf("empty builders added rules: %+v", p)
	}
}

func TestExec(t *testing.T) {
	c := mustCompile(t, DenyAll().AllowExec("ls", "git-*", "/opt/tools/**", "/usr/bin/py?hon"))
	tests := []struct {
		cmd  string
		want bool
	}{
		{"ls", true},
		{"/bin/ls", true}, // name patterns match the last segment
		{"/usr/local/bin/ls", true},
		{"git-upload-pack", true},
		{"git", false},
		{"/opt/tools/x/y", true},
		{"/opt/tools", true},
		{"tools", false}, // path patterns never match bare names
		{"/usr/bin/python", true},
		{"python", false},
		{"lsx", false},
		{"", false},
		{".", false},
		{"..", false},
		{"./ls", false},
		{"bin/ls", false},
		{"/bin/../bin/ls", false},
		{"/", false},
		{"l\x00s", false},
		{"/bin/l\x00s", false},
		{"//bin//ls/", true},
	}
	for _, tt := range tests {
		if got := c.CheckExec(tt.cmd) == nil; got != tt.want {
			t.Errorf("CheckExec(%q) allowed=%v, want %v", tt.cmd, got, tt.want)
		}
	}
}

func TestEnvAndTools(t *testing.T) {
	c := mustCompile(t, DenyAll().AllowEnv("HOME", "LC_*", "X?").AllowTool("fs.*", "search", "a*b*c"))
	envs := map[string]bool{"HOME": true, "home": false, "HOMEX": false, "LC_ALL": true, "LC_": true, "LC": false,
		"XY": true, "X": false, "XYZ": false, "": false, "LC_A=B": false, "LC_\x00": false,
		strings.Repeat("LC_", MaxTargetLen): false}
	for k, want := range envs {
		if got := c.CheckEnv(k) == nil; got != want {
			t.Errorf("CheckEnv(%q) allowed=%v, want %v", k, got, want)
		}
	}
	tools := map[string]bool{"fs.read": true, "fs.": true, "fs": false, "search": true, "Search": false,
		"abc": true, "aXbYc": true, "acb": false, "": false, "fs.\x00": false}
	for n, want := range tools {
		if got := c.CheckTool(n) == nil; got != want {
			t.Errorf("CheckTool(%q) allowed=%v, want %v", n, got, want)
		}
	}
}

func TestDeniedError(t *testing.T) {
	c := mustCompile(t, DenyAll().DenyFS([]FSOp{FSWrite}, "/etc/**"))
	tests := []struct {
		err  error
		msg  string
		rule int
	}{
		{c.CheckFS(FSWrite, "/etc/passwd"), "permission denied: fs write /etc/passwd", 0},
		{c.CheckFS(FSRead, "/etc/passwd"), "permission denied: fs read /etc/passwd", -1},
		{c.CheckFS(FSRead, "/a\nb"), `permission denied: fs read "/a\nb"`, -1},
		{c.CheckFS(FSRead, "/a b"), `permission denied: fs read "/a b"`, -1},
		{c.CheckNet(NetConnect, "example.com", 443), "permission denied: net connect example.com:443", -1},
		{c.CheckNet(NetListen, "::1", 80), "permission denied: net listen [::1]:80", -1},
		{c.CheckNet(NetConnect, "[::1]", 80), "permission denied: net connect [::1]:80", -1},
		{c.CheckNet(NetDNS, "example.com", 0), "permission denied: net dns example.com", -1},
		{c.CheckExec("/bin/sh"), "permission denied: exec /bin/sh", -1},
		{c.CheckEnv("AWS_KEY"), "permission denied: env read AWS_KEY", -1},
		{c.CheckTool("fetch"), "permission denied: tool call fetch", -1},
		{c.CheckTool(""), `permission denied: tool call ""`, -1},
	}
	for _, tt := range tests {
		var de *DeniedError
		if !errors.As(tt.err, &de) {
			t.Fatalf("%v is not a *DeniedError", tt.err)
		}
		if tt.err.Error() != tt.msg {
			t.Errorf("message %q, want %q", tt.err.Error(), tt.msg)
		}
		if de.Rule != tt.rule {
			t.Errorf("%q: rule %d, want %d", tt.msg, de.Rule, tt.rule)
		}
		if !errors.Is(tt.err, errno.EACCES) || !errors.Is(tt.err, fs.ErrPermission) || errno.Of(tt.err) != errno.EACCES {
			t.Errorf("%q does not match EACCES", tt.msg)
		}
		if errors.Is(tt.err, errno.EPERM) {
			t.Errorf("%q matches EPERM", tt.msg)
		}
	}
}

func TestAudit(t *testing.T) {
	base := mustCompile(t, DenyAll().AllowRead("/ok").DenyFS(nil, "/ok/no"))
	var mu sync.Mutex
	var events []Event
	sub := func(e Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	denials := base.WithAudit(sub, AuditDenials)
	_ = denials.CheckFS(FSRead, "/ok/a")
	_ = denials.CheckFS(FSRead, "/ok/no")
	_ = denials.CheckFS(FSRead, "/elsewhere")
	_ = denials.CheckNet(NetConnect, "example.com", 80)
	if len(events) != 3 {
		t.Fatalf("got %d events, want 3 denials: %+v", len(events), events)
	}
	want := []Event{
		{Domain: DomainFS, Op: "read", Target: "/ok/no", Allowed: false, Rule: 1},
		{Domain: DomainFS, Op: "read", Target: "/elsewhere", Allowed: false, Rule: -1},
		{Domain: DomainNet, Op: "connect", Target: "example.com:80", Allowed: false, Rule: -1},
	}
	for i, w := range want {
		got := events[i]
		if got.Time.IsZero() {
			t.Errorf("event %d has no time", i)
		}
		got.Time = w.Time
		if got != w {
			t.Errorf("event %d = %+v, want %+v", i, got, w)
		}
	}

	events = nil
	all := base.WithAudit(sub, AuditAll)
	_ = all.CheckFS(FSRead, "/ok/a")
	_ = all.CheckNet(NetDNS, "x", 0)
	if len(events) != 2 || !events[0].Allowed || events[0].Rule != 0 || events[1].Allowed {
		t.Errorf("AuditAll events: %+v", events)
	}

	// The original checker is unchanged and silent.
	events = nil
	_ = base.CheckFS(FSRead, "/nope")
	if len(events) != 0 {
		t.Errorf("base checker audited: %+v", events)
	}
	// A nil checker with audit still denies, and reports.
	var nilChecker *Checker
	if err := nilChecker.WithAudit(sub, AuditAll).CheckEnv("A"); err == nil || len(events) != 1 {
		t.Errorf("nil checker with audit: err=%v events=%+v", err, events)
	}
}

// TestConcurrent runs checks from many goroutines against one checker with
// an audit subscriber; run with -race.
func TestConcurrent(t *testing.T) {
	var mu sync.Mutex
	n := 0
	c := mustCompile(t, AllowAll().DenyFS(nil, "/secret/**")).WithAudit(func(Event) {
		mu.Lock()
		n++
		mu.Unlock()
	}, AuditAll)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if (c.CheckFS(FSRead, "/secret/x") == nil) || c.CheckFS(FSWrite, "/tmp/a") != nil ||
					c.CheckNet(NetConnect, "10.0.0.1", g*i%65536) != nil {
					t.Error("wrong decision")
					return
				}
			}
		}()
	}
	wg.Wait()
	if n != 8*200*3 {
		t.Errorf("audited %d events, want %d", n, 8*200*3)
	}
}

func TestCompileIsolatedFromPolicy(t *testing.T) {
	p := DenyAll().AllowRead("/a")
	c := mustCompile(t, p)
	p.FS[0].Paths[0] = "/b/**"
	p.FS[0].Effect = Deny
	if c.CheckFS(FSRead, "/a/x") != nil || c.CheckFS(FSRead, "/b/x") == nil {
		t.Errorf("checker changed with its policy")
	}
}

func TestAllocations(t *testing.T) {
	c := benchChecker(t)
	silent := c.WithAudit(nil, AuditAll)
	checks := map[string]func(){
		"fs":        func() { _ = c.CheckFS(FSRead, "/usr/lib/node_modules/x/index.js") },
		"fs glob":   func() { _ = c.CheckFS(FSWrite, "/workspace/src/app/main.go") },
		"net":       func() { _ = c.CheckNet(NetConnect, "api.example.com", 443) },
		"net ip":    func() { _ = c.CheckNet(NetConnect, "10.1.2.3", 5432) },
		"net ipv6":  func() { _ = c.CheckNet(NetConnect, "::1", 8080) },
		"exec":      func() { _ = c.CheckExec("/usr/bin/git") },
		"env":       func() { _ = c.CheckEnv("LC_ALL") },
		"tool":      func() { _ = c.CheckTool("fs.read") },
		"audit off": func() { _ = silent.CheckEnv("HOME") },
	}
	for name, f := range checks {
		f()
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs per allowed check", name, n)
		}
	}
}

func TestLogAudit(t *testing.T) {
	var buf strings.Builder
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := mustCompile(t, DenyAll().AllowEnv("HOME")).WithAudit(LogAudit(l), AuditAll)
	_ = c.CheckEnv("HOME")
	_ = c.CheckEnv("SECRET")
	out := buf.String()
	for _, want := range []string{"level=DEBUG", "target=HOME allowed=true rule=0", "level=WARN",
		"domain=env op=read target=SECRET allowed=false rule=-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
