package secexec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/secexec/secexec/kernel/policy"
)

// JS runs JavaScript in a VM. Each call is a `node` process with an
// isolate no other guest ever used; the VM's filesystem, permissions and
// limits apply as to any other program.
type JS struct {
	vm *VM
}

// JS returns the VM's JavaScript API.
func (v *VM) JS() *JS { return &JS{vm: v} }

// Execute runs src as a Node.js script (CommonJS, as `node -e`) and
// waits for it and everything it scheduled. The Result's Outcome says
// whether it succeeded; an uncaught exception exits 1 with its stack on
// stderr, as Node does.
func (j *JS) Execute(ctx context.Context, src string, opts *ExecOptions) (*Result, error) {
	return j.vm.Run(ctx, []string{"node", "-e", src}, opts)
}

// EvalError reports an expression that threw (or a promise that
// rejected) in Evaluate; Stack is the guest's error text.
type EvalError struct {
	Stack  string
	Result *Result
}

func (e *EvalError) Error() string { return "secexec: evaluation failed: " + e.Stack }

// evalWrapper evaluates process.argv[1] at global scope, awaits it, and
// writes its JSON after a marker line the host chose, so output the
// expression itself prints cannot be mistaken for the value. It writes
// with console functions taken before the expression runs (printing one
// string does not load util or streams, which would cost more than most
// expressions).
const evalWrapper = `const m = process.argv[2], out = console.log, err = console.error;
Promise.resolve().then(() => (0, eval)(process.argv[1])).then(
  (v) => { const s = JSON.stringify(v); out("\n" + m + (s === undefined ? "null" : s)); },
  (e) => { err(String(e && e.stack || e)); process.exitCode = 1; });`

// Evaluate evaluates a JavaScript expression, awaiting it if it is a
// promise, and returns its value as JSON (undefined and functions become
// null). A thrown error or rejected promise is an *EvalError.
func (j *JS) Evaluate(ctx context.Context, expr string, opts *ExecOptions) (json.RawMessage, error) {
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	marker := "\x00secexec-value-" + hex.EncodeToString(tok[:]) + "\x00"
	if opts == nil {
		opts = &ExecOptions{}
	}
	o := *opts
	o.Stdout, o.Stderr = nil, nil
	res, err := j.vm.Run(ctx, []string{"node", "-e", evalWrapper, expr, marker}, &o)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndex(res.Stdout, []byte(marker))
	if res.ExitCode != 0 || i < 0 {
		stack := string(bytes.TrimSpace(res.Stderr))
		if stack == "" {
			stack = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		return nil, &EvalError{Stack: stack, Result: res}
	}
	val := bytes.TrimSuffix(res.Stdout[i+len(marker):], []byte("\n"))
	if !json.Valid(val) {
		return nil, &EvalError{Stack: "the value is not valid JSON", Result: res}
	}
	return json.RawMessage(append([]byte(nil), val...)), nil
}

// OneShot configures Execute and Evaluate: the VM to create, and the run.
type OneShot struct {
	// VM configures the fresh VM; its zero value denies everything
	// except running node itself, which a one-shot call needs.
	VM Options
	// Exec adjusts the run (stdin, env, timeout, output limits).
	Exec ExecOptions
}

// nodeOnly is the policy of a one-shot VM without permissions: the
// guest may run node and use its own VM's files, nothing else.
func nodeOnly() *Permissions {
	return DenyAll().
		AllowFS(policy.AllFSOps(), "/**").
		AllowExec("node", "/usr/bin/node")
}

func oneShotVM(ctx context.Context, o *OneShot) (*VM, *ExecOptions, error) {
	if o == nil {
		o = &OneShot{}
	}
	vo := o.VM
	if vo.Permissions == nil {
		vo.Permissions = nodeOnly()
	}
	vm, err := NewVM(ctx, vo)
	if err != nil {
		return nil, nil, err
	}
	eo := o.Exec
	return vm, &eo, nil
}

// Execute runs src in a fresh VM, which is disposed of afterwards.
func Execute(ctx context.Context, src string, o *OneShot) (*Result, error) {
	vm, eo, err := oneShotVM(ctx, o)
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	return vm.JS().Execute(ctx, src, eo)
}

// Evaluate evaluates expr in a fresh VM, which is disposed of afterwards.
func Evaluate(ctx context.Context, expr string, o *OneShot) (json.RawMessage, error) {
	vm, eo, err := oneShotVM(ctx, o)
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	return vm.JS().Evaluate(ctx, expr, eo)
}

// IsEvalError reports whether err is an evaluation that threw.
func IsEvalError(err error) bool {
	var e *EvalError
	return errors.As(err, &e)
}
