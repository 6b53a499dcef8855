package secexec_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/secexec/secexec"
)

// A Host owns the engine processes its VMs run in. VMs of different
// engine groups never share an engine: a guest that takes its engine down
// (here a V8 fatal out-of-memory error) loses only its group's VMs, and
// the error says why without the engine's own text.
func ExampleHost() {
	ctx := context.Background()
	host := secexec.NewHost(secexec.HostOptions{})
	defer host.Close(ctx)

	alice, err := host.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll(), EngineGroup: "alice"})
	if err != nil {
		panic(err)
	}
	defer alice.Close()
	bob, err := host.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll(), EngineGroup: "bob"})
	if err != nil {
		panic(err)
	}
	defer bob.Close()

	_, err = alice.Exec(ctx, `node -e 'new Array(2e8).fill(1.5)'`, nil)
	var lost *secexec.EngineLostError
	if errors.As(err, &lost) {
		fmt.Println("alice:", lost.Reason)
	}
	res, err := bob.Exec(ctx, "echo still here", nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("bob: %s", res.Stdout)
	// Prints:
	// alice: engine_out_of_memory
	// bob: still here
	// (security/faultdom_test.go runs this attack.)
}
