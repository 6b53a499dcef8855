package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func fullPolicy() *Policy {
	return &Policy{
		FS: []FSRule{
			{Effect: Allow, Ops: []FSOp{FSRead, FSStat}, Paths: []string{"/usr/**", "/etc/ssl/"}},
			{Effect: Deny, Paths: []string{"/usr/secret"}},
		},
		Net:   []NetRule{{Effect: Allow, Ops: []NetOp{NetConnect}, Hosts: []string{"*.example.com:443", "[::1]:8000-8999"}}},
		Exec:  []ExecRule{{Effect: Allow, Commands: []string{"git", "/usr/bin/*"}}},
		Env:   []EnvRule{{Effect: Allow, Keys: []string{"LC_*"}}},
		Tools: []ToolRule{{Effect: Deny, Names: []string{"shell"}}},
	}
}

const fullPolicyJSON = `{"fs":[{"effect":"allow","ops":["read","stat"],"paths":["/usr/**","/etc/ssl/"]},` +
	`{"effect":"deny","paths":["/usr/secret"]}],` +
	`"net":[{"effect":"allow","ops":["connect"],"hosts":["*.example.com:443","[::1]:8000-8999"]}],` +
	`"exec":[{"effect":"allow","commands":["git","/usr/bin/*"]}],` +
	`"env":[{"effect":"allow","keys":["LC_*"]}],` +
	`"tools":[{"effect":"deny","names":["shell"]}]}`

func TestJSONRoundTrip(t *testing.T) {
	b, err := json.Marshal(fullPolicy())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != fullPolicyJSON {
		t.Errorf("field names changed:\n got %s\nwant %s", b, fullPolicyJSON)
	}
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, fullPolicy()) {
		t.Errorf("round trip: %+v", p)
	}
	for _, p := range []*Policy{AllowAll(), DenyAll(), DenyAll().AllowRead("/a").AllowWrite("/b").AllowNet("x.test")} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(%s): %v", b, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Errorf("round trip of %s: %+v", b, q)
		}
	}
	// Empty and null domains are the same as missing ones.
	for _, doc := range []string{`{}`, `{"fs":null}`, `{"fs":[],"net":[],"exec":[],"env":[],"tools":[]}`, " {\n} \n"} {
		p, err := Parse([]byte(doc))
		if err != nil {
			t.Errorf("Parse(%s): %v", doc, err)
			continue
		}
		b, _ := json.Marshal(p)
		if string(b) != `{}` {
			t.Errorf("Parse(%s) marshals to %s", doc, b)
		}
	}
	// Whitespace, key order and an explicit "*" op are fine.
	if _, err := Parse([]byte(`{ "tools": [ { "names": ["x"], "effect": "allow" } ], "fs": [{"ops": ["*"], "paths": ["/"], "effect": "deny"}] }`)); err != nil {
		t.Error(err)
	}
}

func TestParseErrors(t *testing.T) {
	rule := func(domain, body string) string { return `{"` + domain + `":[` + body + `]}` }
	fsr := func(paths string) string { return rule("fs", `{"effect":"allow","paths":[`+paths+`]}`) }
	netr := func(hosts string) string { return rule("net", `{"effect":"allow","hosts":[`+hosts+`]}`) }
	manyRules := `{"fs":[` + strings.Repeat(`{"effect":"allow","paths":["/"]},`, MaxRules) + `{"effect":"allow","paths":["/"]}]}`
	manyPaths := fsr(strings.Repeat(`"/a",`, MaxPatternsPerRule) + `"/a"`)
	tests := []struct {
		name, doc, where string
	}{
		{"empty", ``, ""},
		{"null", `null`, ""},
		{"array", `[]`, ""},
		{"string", `"x"`, ""},
		{"truncated", `{"fs":[`, ""},
		{"trailing data", `{} {}`, ""},
		{"trailing garbage", `{}x`, ""},
		{"bad syntax", `{"fs":[},`, ""},
		{"invalid utf8", "{\"fs\":[{\"effect\":\"allow\",\"paths\":[\"/\xff\"]}]}", ""},
		{"too big", `{"fs":[{"effect":"allow","paths":["/` + strings.Repeat("a", MaxPolicyBytes) + `"]}]}`, ""},
		{"unknown key", `{"files":[]}`, "files"},
		{"mis-cased key", `{"FS":[]}`, "FS"},
		{"repeated key", `{"fs":[],"fs":[]}`, "fs"},
		{"domain not array", `{"fs":{}}`, "fs"},
		{"domain string", `{"fs":"x"}`, "fs"},
		{"rule not object", `{"fs":["x"]}`, "fs[0]"},
		{"unknown rule key", rule("fs", `{"effect":"allow","paths":["/"],"hosts":["x"]}`), "fs[0].hosts"},
		{"mis-cased rule key", rule("fs", `{"Effect":"allow","paths":["/"]}`), "fs[0].Effect"},
		{"repeated rule key", rule("fs", `{"effect":"allow","paths":["/a"],"paths":["/b"]}`), "fs[0].paths"},
		{"repeated effect", rule("fs", `{"effect":"deny","paths":["/a"],"effect":"allow"}`), "fs[0].effect"},
		{"nested array", fsr(`["/a"]`), "fs[0].paths"},
		{"nested object", rule("fs", `{"effect":{},"paths":["/a"]}`), "fs[0].effect"},
		{"effect type", rule("fs", `{"effect":1,"paths":["/a"]}`), ""},
		{"paths type", rule("fs", `{"effect":"allow","paths":"/a"}`), ""},
		{"missing effect", rule("fs", `{"paths":["/a"]}`), "fs[0].effect"},
		{"bad effect", rule("fs", `{"effect":"Allow","paths":["/a"]}`), "fs[0].effect"},
		{"null effect", rule("fs", `{"effect":null,"paths":["/a"]}`), "fs[0].effect"},
		{"unknown op", rule("fs", `{"effect":"allow","ops":["reed"],"paths":["/a"]}`), "fs[0].ops[0]"},
		{"net op in fs", rule("fs", `{"effect":"allow","ops":["read","connect"],"paths":["/a"]}`), "fs[0].ops[1]"},
		{"no paths", fsr(``), "fs[0].paths"},
		{"missing paths", rule("fs", `{"effect":"allow"}`), "fs[0].paths"},
		{"empty path", fsr(`""`), "fs[0].paths[0]"},
		{"null path", fsr(`null`), "fs[0].paths[0]"},
		{"relative path", fsr(`"/ok","a/b"`), "fs[0].paths[1]"},
		{"dotdot", fsr(`"/a/../b"`), "fs[0].paths[0]"},
		{"inner globstar", fsr(`"/a/**b"`), "fs[0].paths[0]"},
		{"bad escape", fsr(`"/a/\\x"`), "fs[0].paths[0]"},
		{"nul", fsr(`"/a\u0000"`), "fs[0].paths[0]"},
		{"long pattern", fsr(`"/` + strings.Repeat("a", MaxPatternLen) + `"`), "fs[0].paths[0]"},
		{"too many rules", manyRules, "fs"},
		{"too many paths", manyPaths, "fs[0].paths"},
		{"unbracketed ipv6", netr(`"::1"`), "net[0].hosts[0]"},
		{"bad port", netr(`"x.test:99999"`), "net[0].hosts[0]"},
		{"backwards range", netr(`"x.test:9-1"`), "net[0].hosts[0]"},
		{"bad host", netr(`"exa mple.com"`), "net[0].hosts[0]"},
		{"numeric host", netr(`"127.1"`), "net[0].hosts[0]"},
		{"net unknown op", rule("net", `{"effect":"allow","ops":["accept"],"hosts":["*"]}`), "net[0].ops[0]"},
		{"net no hosts", rule("net", `{"effect":"allow","hosts":[]}`), "net[0].hosts"},
		{"exec relative", rule("exec", `{"effect":"allow","commands":["bin/ls"]}`), "exec[0].commands[0]"},
		{"exec globstar", rule("exec", `{"effect":"allow","commands":["**"]}`), "exec[0].commands[0]"},
		{"exec empty", rule("exec", `{"effect":"allow","commands":[""]}`), "exec[0].commands[0]"},
		{"env equals", rule("env", `{"effect":"allow","keys":["A=B"]}`), "env[0].keys[0]"},
		{"env globstar", rule("env", `{"effect":"allow","keys":["**"]}`), "env[0].keys[0]"},
		{"env inner globstar", rule("env", `{"effect":"allow","keys":["A**"]}`), "env[0].keys[0]"},
		{"env wrong field", rule("env", `{"effect":"allow","names":["A"]}`), "env[0].names"},
		{"tools empty", rule("tools", `{"effect":"allow","names":[""]}`), "tools[0].names[0]"},
		{"tools bad effect", rule("tools", `{"effect":"permit","names":["x"]}`), "tools[0].effect"},
	}
	for _, tt := range tests {
		p, err := Parse([]byte(tt.doc))
		if err == nil {
			t.Errorf("%s: Parse succeeded: %+v", tt.name, p)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %T is not a *ParseError: %v", tt.name, err, err)
			continue
		}
		if !errors.Is(err, ErrInvalidPolicy) || !errors.Is(err, errno.EINVAL) {
			t.Errorf("%s: %v does not match ErrInvalidPolicy and EINVAL", tt.name, err)
		}
		if tt.where != "" && pe.Where != tt.where {
			t.Errorf("%s: Where=%q, want %q (%v)", tt.name, pe.Where, tt.where, err)
		}
		if !strings.HasPrefix(err.Error(), "invalid policy: ") {
			t.Errorf("%s: message %q", tt.name, err)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := map[string]*Policy{
		"fs effect":   {FS: []FSRule{{Paths: []string{"/"}}}},
		"net pattern": {Net: []NetRule{{Effect: Allow, Hosts: []string{"[::1"}}}},
		"exec none":   {Exec: []ExecRule{{Effect: Allow}}},
		"env nul":     {Env: []EnvRule{{Effect: Allow, Keys: []string{"A\x00"}}}},
		"tool utf8":   {Tools: []ToolRule{{Effect: Allow, Names: []string{"\xff"}}}},
		"too many ops": {FS: []FSRule{{Effect: Allow, Ops: make([]FSOp, MaxPatternsPerRule+1),
			Paths: []string{"/"}}}},
	}
	for name, p := range tests {
		if _, err := Compile(p); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: Compile err=%v", name, err)
		}
		if err := p.Validate(); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: Validate err=%v", name, err)
		}
	}
	if err := fullPolicy().Validate(); err != nil {
		t.Errorf("Validate(full): %v", err)
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := Parse([]byte(`{"fs":[{"effect":"allow","paths":["/a/**b"]}]}`))
	want := `invalid policy: fs[0].paths[0]: pattern "/a/**b": "**" must be a whole segment`
	if fmt.Sprint(err) != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
