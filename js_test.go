package secexec_test

import (
	"context"
	"strings"
	"testing"

	"github.com/secexec/secexec"
)

func TestJSExecuteAndEvaluate(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	res, err := vm.JS().Execute(ctx, `console.log("hi"); process.exitCode = 3`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "hi\n" || res.Outcome != secexec.Failed {
		t.Fatalf("%+v", res)
	}
	v, err := vm.JS().Evaluate(ctx, `console.log("noise"); Promise.resolve({a: [1, 2], b: "x"})`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(v) != `{"a":[1,2],"b":"x"}` {
		t.Fatalf("value %s", v)
	}
	_, err = vm.JS().Evaluate(ctx, `Promise.reject(new Error("boom"))`, nil)
	if !secexec.IsEvalError(err) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("rejection: %v", err)
	}
	// The value survives an expression that replaces console and
	// contains format characters; a value JSON cannot encode fails.
	v, err = vm.JS().Evaluate(ctx, `console.log = console.error = null; process.stdout.write = null; "50%s %d"`, nil)
	if err != nil || string(v) != `"50%s %d"` {
		t.Fatalf("value %s, %v", v, err)
	}
	_, err = vm.JS().Evaluate(ctx, `({ toJSON() { throw new Error("no json") } })`, nil)
	if !secexec.IsEvalError(err) || !strings.Contains(err.Error(), "no json") {
		t.Fatalf("toJSON: %v", err)
	}
	// JS reaches the shell and back: node → sh → node.
	res, err = vm.JS().Execute(ctx, `
const cp = require("child_process");
const out = cp.execSync("echo from-sh && node -e 'process.stdout.write(String(6*7))'").toString();
process.stdout.write(out);
const r = cp.spawnSync("sh", ["-c", "exit 5"]);
console.log("status", r.status);`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || string(res.Stdout) != "from-sh\n42status 5\n" {
		t.Fatalf("round trip: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	// node ignores SIGPIPE, its children do not.
	res, err = vm.JS().Execute(ctx, `const r = require("child_process").spawnSync("sh", ["-c", "kill -PIPE $$; echo survived"]);
console.log(r.status, r.signal, JSON.stringify(String(r.stdout)))`, nil)
	if err != nil || string(res.Stdout) != "null SIGPIPE \"\"\n" {
		t.Fatalf("SIGPIPE in a child: %v %q %q", err, res.Stdout, res.Stderr)
	}
}

func TestOneShotEvaluateInFreshVM(t *testing.T) {
	ctx := context.Background()
	v, err := secexec.Evaluate(ctx, `globalThis.leak = 1; 1 + 1`, nil)
	if err != nil || string(v) != "2" {
		t.Fatalf("%s %v", v, err)
	}
	v, err = secexec.Evaluate(ctx, `typeof globalThis.leak`, nil)
	if err != nil || string(v) != `"undefined"` {
		t.Fatalf("state leaked between one-shot VMs: %s %v", v, err)
	}
	res, err := secexec.Execute(ctx, `require("child_process").execSync("ls /")`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 {
		t.Fatalf("a one-shot VM without permissions ran ls: %+v", res)
	}
}
