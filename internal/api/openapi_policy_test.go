package api_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/secexec/secexec/kernel/policy"
)

// permissionsSchema returns the document's Permissions schema.
func permissionsSchema(t *testing.T) *openapi3.Schema {
	t.Helper()
	doc, _ := loadDoc(t)
	ref := doc.Components.Schemas["Permissions"]
	if ref == nil || ref.Value == nil {
		t.Fatal("openapi.json has no Permissions schema")
	}
	create := doc.Components.Schemas["CreateVM"].Value.Properties["permissions"]
	if create == nil || create.Ref != "#/components/schemas/Permissions" {
		t.Fatalf("CreateVM.permissions does not refer to Permissions: %+v", create)
	}
	return ref.Value
}

// TestOpenAPIPermissionsSchemaMatchesPolicy checks the Permissions schema
// against kernel/policy: the operations it lists are the package's, its
// bounds are the parser's, every policy Parse accepts (docs/permissions.md's
// example among them) fits it, and the shapes Parse refuses for their
// form, not their patterns, do not.
func TestOpenAPIPermissionsSchemaMatchesPolicy(t *testing.T) {
	s := permissionsSchema(t)
	rule := func(domain string) *openapi3.Schema { return s.Properties[domain].Value.Items.Value }
	enum := func(domain string) []string {
		var got []string
		for _, v := range rule(domain).Properties["ops"].Value.Items.Value.Enum {
			got = append(got, v.(string))
		}
		slices.Sort(got)
		return got
	}
	var fsOps []string
	for _, op := range append(policy.AllFSOps(), policy.FSAll) {
		fsOps = append(fsOps, string(op))
	}
	slices.Sort(fsOps)
	if got := enum("fs"); !slices.Equal(got, fsOps) {
		t.Errorf("fs ops: schema %q, kernel/policy %q", got, fsOps)
	}
	netOps := []string{string(policy.NetAll), string(policy.NetConnect), string(policy.NetDNS), string(policy.NetListen)}
	slices.Sort(netOps)
	if got := enum("net"); !slices.Equal(got, netOps) {
		t.Errorf("net ops: schema %q, kernel/policy %q", got, netOps)
	}
	patternKey := map[string]string{"fs": "paths", "net": "hosts", "exec": "commands", "env": "keys", "tools": "names"}
	for domain, key := range patternKey {
		if max := s.Properties[domain].Value.MaxItems; max == nil || *max != policy.MaxRules {
			t.Errorf("%s: maxItems %v, policy.MaxRules %d", domain, max, policy.MaxRules)
		}
		p := rule(domain).Properties[key].Value
		if p.MaxItems == nil || *p.MaxItems != policy.MaxPatternsPerRule {
			t.Errorf("%s.%s: maxItems %v, policy.MaxPatternsPerRule %d", domain, key, p.MaxItems, policy.MaxPatternsPerRule)
		}
		if p.Items.Value.MaxLength == nil || *p.Items.Value.MaxLength != policy.MaxPatternLen {
			t.Errorf("%s.%s[]: maxLength %v, policy.MaxPatternLen %d", domain, key, p.Items.Value.MaxLength, policy.MaxPatternLen)
		}
	}

	valid := [][]byte{[]byte(`{}`), docsPolicy(t)}
	for _, p := range []*policy.Policy{policy.AllowAll(), policy.DenyAll(),
		policy.DenyAll().AllowRead("/usr/**").AllowWrite("/workspace/**").AllowFS(policy.AllFSOps(), "/tmp/**").
			DenyFS([]policy.FSOp{policy.FSMount}, "/**").AllowNet("localhost:3000").DenyNet("10.0.0.0/8:*")} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		valid = append(valid, b)
	}
	for _, b := range valid {
		if _, err := policy.Parse(b); err != nil {
			t.Fatalf("policy.Parse(%s): %v", b, err)
		}
		if err := visitJSON(s, b); err != nil {
			t.Errorf("a policy Parse accepts does not fit the schema: %s: %v", b, err)
		}
	}
	for _, b := range []string{
		`[]`,
		`{"FS": []}`,
		`{"fs": [], "files": []}`,
		`{"fs": [{"effect": "maybe", "paths": ["/"]}]}`,
		`{"fs": [{"paths": ["/"]}]}`,
		`{"fs": [{"effect": "allow", "ops": ["fly"], "paths": ["/"]}]}`,
		`{"fs": [{"effect": "allow", "paths": []}]}`,
		`{"fs": [{"effect": "allow", "paths": [""]}]}`,
		`{"fs": [{"effect": "allow", "paths": ["/"], "hosts": ["x:1"]}]}`,
		`{"net": [{"effect": "allow", "ops": ["read"], "hosts": ["x:1"]}]}`,
		`{"exec": [{"effect": "allow", "commands": "git"}]}`,
		`{"env": [{"effect": "allow"}]}`,
		`{"tools": [{"effect": "deny", "names": [1]}]}`,
		`{"fs": [{"effect": "allow", "paths": ["/` + strings.Repeat("a", policy.MaxPatternLen) + `"]}]}`,
	} {
		if _, err := policy.Parse([]byte(b)); err == nil {
			t.Fatalf("policy.Parse accepted %.80s", b)
		}
		if err := visitJSON(s, []byte(b)); err == nil {
			t.Errorf("the schema accepts %.80s, which policy.Parse refuses", b)
		}
	}
}

// docsPolicy returns the first JSON block of docs/permissions.md, the
// policy users copy.
func docsPolicy(t *testing.T) []byte {
	t.Helper()
	md, err := os.ReadFile("../../docs/permissions.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(md), "```json\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/permissions.md has no JSON block")
	}
	return []byte(block)
}

func visitJSON(s *openapi3.Schema, b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return s.VisitJSON(v)
}
