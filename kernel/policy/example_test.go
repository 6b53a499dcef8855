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
