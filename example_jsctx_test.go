package secexec_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/secexec/secexec"
)

// A persistent context keeps its globals between evaluations, like a
// REPL; evaluating on a live context starts no process.
func ExampleJS_NewContext() {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
	if err != nil {
		panic(err)
	}
	defer vm.Close()

	c, err := vm.JS().NewContext(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Evaluate(ctx, "let total = 40; function add(n) { total += n; return total }"); err != nil {
		panic(err)
	}
	v, _ := c.Evaluate(ctx, "add(2)")
	fmt.Println(string(v))
	res, _ := c.EvaluateResult(ctx, `console.log("total is", total); await Promise.resolve({total})`)
	fmt.Printf("%s %q\n", res.Value, res.Stdout)
	// Output:
	// 42
	// {"total":42} "total is 42\n"
}

// Host tools are Go functions guests call by name, from node and from
// the shell; a tool rule must allow each one.
func ExampleOptions_tools() {
	ctx := context.Background()
	add := func(_ context.Context, call secexec.ToolCall) (json.RawMessage, error) {
		var args struct{ A, B int }
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, err
		}
		return json.Marshal(args.A + args.B)
	}
	vm, err := secexec.NewVM(ctx, secexec.Options{
		Permissions: secexec.DenyAll().AllowFS(nil, "/**").AllowExec("node", "tool").AllowTool("add"),
		Tools:       map[string]secexec.Tool{"add": add},
	})
	if err != nil {
		panic(err)
	}
	defer vm.Close()

	v, err := vm.JS().Evaluate(ctx, `require('secexec:tools').call('add', {a: 2, b: 3})`, nil)
	fmt.Println(string(v), err)
	res, _ := vm.Exec(ctx, `tool add '{"a": 20, "b": 22}'`, nil)
	fmt.Printf("%s", res.Stdout)
	// Output:
	// 5 <nil>
	// 42
}
