package kernel

import "context"

// ResolveExecutable resolves the program name as a spawn by p would: a name
// containing '/' is a guest path relative to p's working directory;
// otherwise it is searched in the PATH of env (DefaultPath when env has
// none). The exec policy is checked. Runtimes use it for execve, which
// replaces the program of a process without creating a new one, and for
// interpreters named by "#!" lines.
func (p *Process) ResolveExecutable(ctx context.Context, name string, env []string) (Executable, error) {
	exe, err := p.k.findExecutable(ctx, p.Caller(), SpawnOptions{Argv: []string{name}, Env: env})
	if err != nil {
		return Executable{}, err
	}
	if p.k.authExec != nil {
		if err := p.k.authExec(ctx, exe.Path, name); err != nil {
			return Executable{}, err
		}
	}
	return exe, nil
}

// LoadProgram asks the registered loaders, in order, for a Program that
// runs exe in p. It fails with ENOEXEC when no loader knows the format.
func (p *Process) LoadProgram(ctx context.Context, exe Executable) (Program, error) {
	return p.k.load(ctx, p, exe)
}

// CloseOnExec closes the descriptors marked close-on-exec, as execve(2)
// does once past its point of no return.
func (p *Process) CloseOnExec() { p.fds.closeOnExec() }
