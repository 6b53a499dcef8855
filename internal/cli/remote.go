package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/client"
)

// The environment variables that stand in for --server and --token.
const (
	serverEnv = "SECEXEC_SERVER"
	tokenEnv  = "SECEXEC_TOKEN"
)

// addRemoteFlags adds --server and --token to every command.
func addRemoteFlags(root *cobra.Command) {
	fl := root.PersistentFlags()
	fl.String("server", "", "run against the secexec serve at URL instead of in this process (default $"+serverEnv+"): exec, node, run, eval, shell, cp, vm")
	fl.String("token", "", "bearer token for --server (default $"+tokenEnv+", which keeps it out of the process list)")
}

// remoteOf returns the client of --server (or $SECEXEC_SERVER), or nil
// when the command runs here.
func remoteOf(cmd *cobra.Command) (*client.Client, error) {
	u, _ := cmd.Flags().GetString("server")
	if u == "" {
		u = os.Getenv(serverEnv)
	}
	if u == "" {
		return nil, nil
	}
	tok, _ := cmd.Flags().GetString("token")
	if tok == "" {
		tok = os.Getenv(tokenEnv)
	}
	c, err := client.New(u, client.Options{Token: tok})
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("--server: %w", err)}
	}
	return c, nil
}

// needRemote is remoteOf for commands that only work against a server.
func needRemote(cmd *cobra.Command) (*client.Client, error) {
	c, err := remoteOf(cmd)
	if err == nil && c == nil {
		err = &usageError{err: fmt.Errorf("%s works on the VMs of a server: give --server URL (or $%s)", cmd.CommandPath(), serverEnv)}
	}
	return c, err
}

// remoteRunner runs the command of a CLI invocation in a server's VM.
type remoteRunner func(ctx context.Context, vm *client.VM, eo *client.ExecOptions) (*client.Result, error)

// remoteArgv is a remoteRunner for a fixed argument vector.
func remoteArgv(argv []string) remoteRunner {
	return func(ctx context.Context, vm *client.VM, eo *client.ExecOptions) (*client.Result, error) {
		return vm.Run(ctx, argv, eo)
	}
}

// localVM refuses --vm for a command that runs here.
func (f *vmFlags) localVM() error {
	if f.vmID != "" {
		return &usageError{err: errors.New("--vm names a VM of a server: give --server URL (or $" + serverEnv + ")")}
	}
	return nil
}

// vmShapingFlags are the flags that make a VM: meaningless with --vm,
// whose VM exists already.
var vmShapingFlags = []string{"permissions", "allow-read", "allow-write", "allow-net", "allow-npm-registry", "allow-pip-index",
	"allow-env", "mount", "fs-bytes", "max-processes", "memory", "cpu-time", "vm-memory", "vm-cpu-time",
	"publish", "allow-non-loopback", "real-time", "frozen-clock", "clock", "from-snapshot", "save-snapshot"}

// remoteVMOptions turns the VM flags into a server VM's options. Flags
// that reach into this host (mounts, published ports) cannot apply to a
// VM that runs elsewhere.
func remoteVMOptions(cmd *cobra.Command, vf *vmFlags) (client.VMOptions, error) {
	if len(vf.mounts) > 0 {
		return client.VMOptions{}, &usageError{err: errors.New("--mount shares this host's directories with a local VM; with --server copy files in with 'secexec cp'")}
	}
	if len(vf.publish) > 0 {
		return client.VMOptions{}, &usageError{err: errors.New("--publish serves a local VM's port on this host; with --server, 'secexec port ID PORT' prints a preview URL of a server VM's port")}
	}
	if vf.fromSnapshot != "" || vf.saveSnapshot != "" {
		return client.VMOptions{}, &usageError{err: errors.New("--from-snapshot and --save-snapshot use a snapshot store on this host; with --server use the API's snapshot routes")}
	}
	opts, err := vf.options(cmd)
	if err != nil {
		return client.VMOptions{}, err
	}
	l := opts.Limits
	return client.VMOptions{
		Permissions: opts.Permissions, Env: opts.Env, Cwd: opts.Cwd, Clock: opts.Clock.String(),
		Limits: client.Limits{FSBytes: l.FSBytes, Processes: l.Processes, MemoryBytes: l.MemoryBytes,
			CPUTime: l.CPUTime, VMMemoryBytes: l.VMMemoryBytes, VMCPUTime: l.VMCPUTime},
	}, nil
}

// remoteVM is the VM a command runs in on the server: the one --vm
// names, with --env and --cwd applied to the command, or a fresh one
// made from the flags, deleted by done.
func remoteVM(cmd *cobra.Command, c *client.Client, vf *vmFlags) (vm *client.VM, env map[string]string, done func(), err error) {
	if vf.vmID != "" {
		for _, name := range vmShapingFlags {
			if cmd.Flags().Changed(name) {
				return nil, nil, nil, &usageError{err: fmt.Errorf("--%s shapes a new VM; --vm %s exists already", name, vf.vmID)}
			}
		}
		env = map[string]string{}
		for _, kv := range vf.env {
			k, v, ok := cutEnv(kv)
			if !ok {
				return nil, nil, nil, &usageError{err: fmt.Errorf("--env %q: want KEY=VALUE", kv)}
			}
			env[k] = v
		}
		return c.VM(vf.vmID), env, func() {}, nil
	}
	vo, err := remoteVMOptions(cmd, vf)
	if err != nil {
		return nil, nil, nil, err
	}
	vm, err = c.NewVM(cmd.Context(), vo)
	if err != nil {
		return nil, nil, nil, err
	}
	return vm, nil, func() { _ = vm.Close() }, nil
}

// runRemote is runInVM on a server.
func runRemote(cmd *cobra.Command, c *client.Client, vf *vmFlags, asJSON bool, files map[string][]byte, run remoteRunner) error {
	if run == nil {
		return &usageError{err: fmt.Errorf("%s does not run against a server yet", cmd.CommandPath())}
	}
	ctx := cmd.Context()
	vm, env, done, err := remoteVM(cmd, c, vf)
	if err != nil {
		return err
	}
	defer done()
	for name, data := range files {
		if err := vm.FS().WriteFile(ctx, name, data); err != nil {
			return err
		}
	}
	eo := &client.ExecOptions{Timeout: vf.timeout, Env: env}
	if vf.vmID != "" {
		eo.Cwd = vf.cwd
	}
	if !asJSON {
		eo.Stdout, eo.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	}
	if in := stdinOf(cmd); in != nil {
		eo.Stdin = in
	}
	res, err := run(ctx, vm, eo)
	if err != nil {
		return err
	}
	return finish(cmd, asJSON, sdkResult(res))
}

// sdkResult is a server's result in the SDK's type, which the CLI's
// output and exit codes are written for.
func sdkResult(r *client.Result) *secexec.Result {
	return &secexec.Result{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, Outcome: secexec.Outcome(r.Outcome),
		Reason: secexec.Reason(r.Reason), Signal: r.Signal, Truncated: r.Truncated, Duration: r.Duration}
}

// remoteEval is `secexec eval` on a server: the value's JSON, or the
// guest's stack and exit 1 for a throw.
func remoteEval(cmd *cobra.Command, c *client.Client, vf *vmFlags, expr string) error {
	vm, env, done, err := remoteVM(cmd, c, vf)
	if err != nil {
		return err
	}
	defer done()
	eo := &client.ExecOptions{Timeout: vf.timeout, Env: env}
	if vf.vmID != "" {
		eo.Cwd = vf.cwd
	}
	v, err := vm.JS().Evaluate(cmd.Context(), expr, eo)
	var ae *client.Error
	if errors.Is(err, client.ErrEval) && errors.As(err, &ae) {
		fmt.Fprintln(cmd.ErrOrStderr(), ae.Message)
		return &exitError{code: 1}
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), string(v))
	return err
}

// remoteTerm is a termProcess on a server.
type remoteTerm struct{ p *client.Process }

func (t remoteTerm) keys() io.WriteCloser  { return t.p.Stdin }
func (t remoteTerm) screen() io.ReadCloser { return t.p.Stdout }
func (t remoteTerm) resize(rows, cols int) { _ = t.p.Resize(min(rows, 1000), min(cols, 1000)) }
func (t remoteTerm) kill()                 { _ = t.p.Signal(client.SIGKILL) }
func (t remoteTerm) wait(ctx context.Context) (int, error) {
	st, err := t.p.Wait(ctx)
	if err != nil {
		return 0, err
	}
	return st.ExitCode, nil
}

// spawnRemoteTerm starts argv on a terminal of a server's VM; done ends
// the session and deletes a VM made for it.
func spawnRemoteTerm(cmd *cobra.Command, c *client.Client, vf *vmFlags, argv []string, rows, cols int) (termProcess, func(), error) {
	vm, env, doneVM, err := remoteVM(cmd, c, vf)
	if err != nil {
		return nil, nil, err
	}
	so := &client.SpawnOptions{Env: env, PTY: &client.PTY{Rows: min(rows, 1000), Cols: min(cols, 1000), Term: os.Getenv("TERM")}}
	if vf.vmID != "" {
		so.Cwd = vf.cwd
	}
	p, err := vm.Spawn(cmd.Context(), argv, so)
	if err != nil {
		doneVM()
		return nil, nil, err
	}
	return remoteTerm{p}, func() { _ = p.Close(); doneVM() }, nil
}
