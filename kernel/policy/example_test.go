package policy_test

import (
	"errors"
	"fmt"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

func Example() {
	p, err := policy.Parse([]byte(`{
	  "fs": [
	    {"effect": "allow", "paths": ["/workspace/**"]},
	    {"effect": "deny", "ops": ["write"], "paths": ["/workspace/.git/"]}
	  ],
	  "net": [{"effect": "allow", "ops": ["connect", "dns"], "hosts": ["**.example.com:443"]}],
	  "env": [{"effect": "allow", "keys": ["HOME", "LC_*"]}]
	}`))
	if err != nil {
		panic(err)
	}
	c, err := policy.Compile(p)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.CheckFS(policy.FSWrite, "/workspace/main.go"))
	fmt.Println(c.CheckFS(policy.FSWrite, "/workspace/.git/config"))
	fmt.Println(c.CheckNet(policy.NetConnect, "api.example.com", 443))
	err = c.CheckEnv("AWS_SECRET_ACCESS_KEY")
	fmt.Println(err, errors.Is(err, errno.EACCES))
	// Output:
	// <nil>
	// permission denied: fs write /workspace/.git/config
	// <nil>
	// permission denied: env read AWS_SECRET_ACCESS_KEY true
}

// The CLI flags map onto the builder methods.
func ExamplePolicy_AllowRead() {
	p := policy.DenyAll().
		AllowRead("/data").            // --allow-read /data
		AllowWrite("/tmp").            // --allow-write /tmp
		AllowNet("registry.test:443"). // --allow-net registry.test:443
		AllowEnv("HOME")               // --allow-env HOME
	c, err := policy.Compile(p)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.CheckFS(policy.FSRead, "/data/a/b.csv"))
	fmt.Println(c.CheckFS(policy.FSWrite, "/data/a/b.csv"))
	fmt.Println(c.CheckNet(policy.NetConnect, "registry.test", 80))
	// Output:
	// <nil>
	// permission denied: fs write /data/a/b.csv
	// permission denied: net connect registry.test:80
}

func ExampleChecker_WithAudit() {
	c, _ := policy.Compile(policy.DenyAll().AllowExec("git"))
	c = c.WithAudit(func(e policy.Event) {
		fmt.Println(e.Domain, e.Op, e.Target, e.Allowed, e.Rule)
	}, policy.AuditAll)
	_ = c.CheckExec("/usr/bin/git")
	_ = c.CheckExec("curl")
	// Output:
	// exec exec /usr/bin/git true 0
	// exec exec curl false -1
}

// A rename or link is allowed only where the policy decides alike, so a
// deny rule cannot be walked around through another name.
func ExampleChecker_CheckFSRelocate() {
	c, _ := policy.Compile(policy.DenyAll().
		AllowFS(nil, "/workspace/**").
		DenyFS([]policy.FSOp{policy.FSWrite}, "/workspace/.git/"))
	// mv .git g (a directory: every path beneath is compared)
	fmt.Println(c.CheckFSRelocate(policy.FSRename, "/workspace/.git", "/workspace/g", true))
	// ln .git/config c (a file: its object ops are compared)
	fmt.Println(c.CheckFSRelocate(policy.FSLink, "/workspace/.git/config", "/workspace/c", false))
	// mv src lib
	fmt.Println(c.CheckFSRelocate(policy.FSRename, "/workspace/src", "/workspace/lib", true))
	// Output:
	// permission denied: fs rename /workspace/.git -> /workspace/g: the policy decides differently at the new name
	// permission denied: fs link /workspace/.git/config -> /workspace/c: the policy decides differently at the new name
	// <nil>
}
