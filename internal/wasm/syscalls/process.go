package syscalls

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"path"
	"strings"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// ExecRequest is how proc_exec replaces the running image: the host
// function validates and loads the new program, closes the close-on-exec
// descriptors, then unwinds the guest with this value as a panic. The
// runner, which wazero hands it back to as an error, discards the old
// instance and runs Program in the same process with Argv and Env.
type ExecRequest struct {
	Program kernel.Program
	Argv    []string
	Env     []string
}

func (r *ExecRequest) Error() string { return "exec " + strings.Join(r.Argv, " ") }

// Bounds of proc_spawn_v3 file actions (agentOS ABI §7.1.1).
const (
	maxActions     = kernel.MaxFileActions
	maxActionBytes = 1 << 20
)

// POSIX_SPAWN_* attribute bits.
const (
	spawnResetIDs   = 1
	spawnSetPgroup  = 2
	spawnSetSigDef  = 4
	spawnSetSigMask = 8
	spawnSetSched   = 16 | 32
	spawnUseVfork   = 64
	spawnSetSID     = 128
	spawnKnown      = spawnResetIDs | spawnSetPgroup | spawnSetSigDef | spawnSetSigMask | spawnSetSched | spawnUseVfork | spawnSetSID
)

// File action opcodes.
const (
	actClose     = 1
	actDup2      = 2
	actOpen      = 3
	actChdir     = 4
	actFchdir    = 5
	actClosefrom = 6
)

func processFuncs() []hostFunc {
	return []hostFunc{
		{"proc_spawn_v3", sig(17), errnoResult, sysFunc(procSpawnV3)},
		{"proc_exec", sig(8), errnoResult, sysFunc(procExec)},
		{"proc_waitpid_v2", sig(6), errnoResult, sysFunc(procWaitpidV2)},
		{"proc_kill", sig(2), errnoResult, sysFunc(procKill)},
		{"proc_signal_mask_v2", sig(5), errnoResult, sysFunc(procSignalMaskV2)},
		{"proc_getpid", sig(1), errnoResult, sysFunc(procGetpid)},
		{"proc_getppid", sig(1), errnoResult, sysFunc(procGetppid)},
		{"fd_pipe", sig(2), errnoResult, sysFunc(fdPipe)},
		{"fd_dup", sig(2), errnoResult, sysFunc(fdDup)},
		{"fd_dup2", sig(2), errnoResult, sysFunc(fdDup2)},
		{"fd_setfd", sig(2), errnoResult, sysFunc(fdSetfd)},
		{"sleep_ms", sig(1), errnoResult, sysFunc(sleepMs)},
		{"umask", sig(3), errnoResult, sysFunc(umask)},
	}
}

// stringList reads a NUL-separated list of at most max bytes.
func stringList(m mem, ptr, n uint32, max int) ([]string, Errno) {
	if int64(n) > int64(max) {
		return nil, E2BIG
	}
	b, ok := m.bytes(ptr, n)
	if !ok {
		return nil, EFAULT
	}
	return splitNul(b), ESUCCESS
}

// execArgs decodes the program path, argv and environment shared by
// proc_spawn_v3 and proc_exec.
func (s *State) execArgs(m mem, st []uint64) (string, []string, []string, Errno) {
	lim := s.P.Kernel().Limits()
	exe, e := m.str(uint32(st[0]), uint32(st[1]), maxPath-1)
	if e != ESUCCESS {
		return "", nil, nil, e
	}
	if exe == "" {
		return "", nil, nil, ENOENT
	}
	if strings.IndexByte(exe, 0) >= 0 {
		return "", nil, nil, EINVAL
	}
	argv, e := stringList(m, uint32(st[2]), uint32(st[3]), lim.ArgvBytes)
	if e != ESUCCESS {
		return "", nil, nil, e
	}
	env, e := stringList(m, uint32(st[4]), uint32(st[5]), lim.EnvBytes)
	if e != ESUCCESS {
		return "", nil, nil, e
	}
	if len(argv) == 0 {
		argv = []string{exe}
	}
	return exe, argv, envList(env), ESUCCESS
}

// lookupEnv returns the value of key in env.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// searchPath resolves a bare program name when the new environment has no
// PATH of its own: the caller's PATH applies then (agentOS ABI §7.1.4). A
// name the kernel will search itself is returned unchanged.
func (s *State) searchPath(ctx context.Context, name string, env []string, cwd string) string {
	if strings.Contains(name, "/") {
		return name
	}
	if _, ok := lookupEnv(env, "PATH"); ok {
		return name
	}
	dirs, ok := lookupEnv(s.Env, "PATH")
	if !ok {
		return name
	}
	for _, dir := range strings.Split(dirs, ":") {
		if dir == "" {
			dir = cwd
		}
		cand := joinGuest(dir, name)
		if !strings.HasPrefix(cand, "/") {
			cand = joinGuest(cwd, cand)
		}
		if st, err := s.P.Stat(ctx, kernel.AtFDCWD, cand, true); err == nil && st.Type() == vfs.TypeRegular {
			return cand
		}
	}
	return name
}

// decodeActions turns the packed posix_spawn file action records of
// proc_spawn_v3 (agentOS ABI §7.1.1) into the kernel's file actions,
// which the kernel runs: this layer only checks the encoding. The whole
// buffer is decoded before any action runs, so a malformed record fails
// the spawn before an earlier OPEN could create a file.
func decodeActions(acts []byte) ([]kernel.FileAction, Errno) {
	var out []kernel.FileAction
	for len(acts) > 0 {
		if len(out) == maxActions {
			return nil, E2BIG
		}
		if len(acts) < 24 {
			return nil, EINVAL
		}
		op := binary.LittleEndian.Uint32(acts[0:])
		fd := int(int32(binary.LittleEndian.Uint32(acts[4:])))
		src := int(int32(binary.LittleEndian.Uint32(acts[8:])))
		oflag := binary.LittleEndian.Uint32(acts[12:])
		mode := binary.LittleEndian.Uint32(acts[16:])
		plen := binary.LittleEndian.Uint32(acts[20:])
		if uint64(plen) > uint64(len(acts)-24) {
			return nil, EINVAL
		}
		p := string(acts[24 : 24+plen])
		acts = acts[24+plen:]
		switch op {
		case actClose:
			out = append(out, kernel.FileClose{FD: fd})
		case actDup2:
			out = append(out, kernel.FileDup2{From: src, To: fd})
		case actOpen:
			if len(p) >= maxPath {
				return nil, EINVAL
			}
			// Only the flags open(2) gives meaning to at open time; a
			// close-on-exec bit would close the descriptor again.
			const allowed = vfs.O_ACCMODE | vfs.O_CREAT | vfs.O_EXCL | vfs.O_NOCTTY | vfs.O_TRUNC |
				vfs.O_APPEND | vfs.O_NONBLOCK | vfs.O_DSYNC | vfs.O_DIRECTORY | vfs.O_NOFOLLOW | vfs.O_SYNC
			out = append(out, kernel.FileOpen{FD: fd, Path: p, Flags: vfs.OpenFlags(oflag) & allowed, Mode: mode & vfs.ModePerm})
		case actChdir:
			out = append(out, kernel.FileChdir{Path: p})
		case actFchdir:
			out = append(out, kernel.FileFchdir{FD: fd})
		case actClosefrom:
			out = append(out, kernel.FileCloseFrom{FD: fd})
		default:
			return nil, EINVAL
		}
	}
	return out, ESUCCESS
}

// sigsetToKernel converts the agentOS signal set (bit i of lo = signal
// i+1) to the kernel's (bit n = signal n). Signals beyond the kernel's
// range do not exist in it.
func sigsetToKernel(lo, _ uint32) uint64 {
	return uint64(lo) << 1 & (1<<kernel.NSig - 2)
}

func sigsetFromKernel(set uint64) (lo, hi uint32) {
	return uint32(set >> 1), uint32(set >> 33)
}

func procSpawnV3(ctx context.Context, s *State, m mem, st []uint64) Errno {
	attr, pgroup, retPid := uint32(st[10]), int32(st[15]), uint32(st[16])
	if !m.valid(retPid, 4) {
		return EFAULT
	}
	exe, argv, env, e := s.execArgs(m, st)
	if e != ESUCCESS {
		return e
	}
	if attr&^spawnKnown != 0 {
		return ENOTSUP
	}
	cwd := s.P.Cwd()
	if n := uint32(st[9]); n > 0 {
		c, e := m.path(uint32(st[8]), n)
		if e != ESUCCESS {
			return e
		}
		if !strings.HasPrefix(c, "/") {
			c = joinGuest(cwd, c)
		}
		cwd = path.Clean(c)
	}
	actLen := uint32(st[7])
	if actLen > maxActionBytes {
		return E2BIG
	}
	acts, ok := m.bytes(uint32(st[6]), actLen)
	if !ok {
		return EFAULT
	}
	actions, e := decodeActions(acts)
	if e != ESUCCESS {
		return e
	}
	opts := kernel.SpawnOptions{
		Argv:    argv,
		Path:    exe,
		Env:     env,
		Cwd:     cwd,
		Actions: actions,
		SigMask: sigsetToKernel(uint32(st[13]), uint32(st[14])),
	}
	if dirs, ok := lookupEnv(s.Env, "PATH"); ok {
		// An empty PATH names the working directory, as in execvp.
		opts.FallbackPath = cmp.Or(dirs, ".")
	}
	if attr&(spawnSetPgroup|spawnSetSID) != 0 {
		if pgroup > 0 && attr&spawnSetSID == 0 {
			opts.Pgid = int(pgroup)
		} else {
			opts.NewGroup = true
		}
	}
	// The process context, not the call's: the child's context derives
	// from it and must not carry this guest's State.
	child, err := s.P.Spawn(s.P.Context(), opts)
	if err != nil {
		return s.errOf(err)
	}
	if attr&spawnSetSigDef != 0 {
		set := sigsetToKernel(uint32(st[11]), uint32(st[12]))
		for sg := kernel.Signal(1); sg < kernel.NSig; sg++ {
			if set&(1<<uint(sg)) != 0 {
				_, _ = child.SetDisposition(sg, kernel.DispositionDefault)
			}
		}
	}
	m.putU32(retPid, uint32(child.PID()))
	return ESUCCESS
}

func procExec(ctx context.Context, s *State, m mem, st []uint64) Errno {
	exe, argv, env, e := s.execArgs(m, st)
	if e != ESUCCESS {
		return e
	}
	lim := s.P.Kernel().Limits()
	count := uint32(st[7])
	if int64(count) > int64(lim.FDsPerProcess) {
		return EINVAL
	}
	raw, ok := m.bytes(uint32(st[6]), count*4)
	if !ok {
		return EFAULT
	}
	name := s.searchPath(ctx, exe, env, s.P.Cwd())
	x, err := s.P.ResolveExecutable(ctx, name, env)
	if err != nil {
		return s.errOf(err)
	}
	prog, err := s.P.LoadProgram(ctx, x)
	if err != nil {
		return s.errOf(err)
	}
	// Past the point of no return: the old image's descriptors marked
	// close-on-exec, and those the caller listed, go away.
	for i := uint32(0); i < count; i++ {
		_ = s.P.Close(int(binary.LittleEndian.Uint32(raw[i*4:])))
	}
	s.P.CloseOnExec()
	s.P.SetImage(x.Path, argv, env)
	panic(&ExecRequest{Program: prog, Argv: argv, Env: env})
}

// waitParkLimit bounds how long a WNOHANG wait that finds nothing parks.
// brush reaps its children by spinning on WNOHANG waits (agentOS ABI
// §7.2); parking until a child changes state (SIGCHLD, see State.park)
// turns that spin into a wait without delaying a reap, and the bound keeps
// the guest's own loop (and cases SIGCHLD does not cover, such as a guest
// that blocks it) going.
const waitParkLimit = 10 * time.Millisecond

// proc_waitpid_v2 options. waitNoPark is secexec's extension for guests
// that have other work than the wait (secexec's Go shell, whose goroutines
// share the one WebAssembly thread): it returns a WNOHANG wait that finds
// nothing at once instead of parking it. agentOS guests never set it.
const (
	waitNoHang = 1
	waitNoPark = 2
)

func procWaitpidV2(ctx context.Context, s *State, m mem, st []uint64) Errno {
	pid, options := int(int32(uint32(st[0]))), uint32(st[1])
	outCode, outSig, outPid, outCore := uint32(st[2]), uint32(st[3]), uint32(st[4]), uint32(st[5])
	if !m.valid(outCode, 4) || !m.valid(outSig, 4) || !m.valid(outPid, 4) || !m.valid(outCore, 4) {
		return EFAULT
	}
	if options&^(waitNoHang|waitNoPark) != 0 {
		return EINVAL
	}
	var got int
	var ws kernel.WaitStatus
	var err error
	if options&waitNoHang != 0 {
		got, ws, err = s.P.Wait(ctx, pid, kernel.WNOHANG)
		if err == nil && got == 0 && options&waitNoPark == 0 {
			s.park(ctx, waitParkLimit)
			got, ws, err = s.P.Wait(ctx, pid, kernel.WNOHANG)
		}
	} else {
		got, ws, err = s.P.Wait(ctx, pid, 0)
	}
	if err != nil {
		return s.errOf(err)
	}
	if got == 0 {
		m.putU32(outPid, 0)
		return ESUCCESS
	}
	var code, signal, core uint32
	if ws.Exited {
		code = uint32(ws.Code & 0xff)
	} else {
		signal = uint32(ws.Signal)
		if ws.CoreDump {
			core = 1
		}
	}
	m.putU32(outCode, code)
	m.putU32(outSig, signal)
	m.putU32(outPid, uint32(got))
	m.putU32(outCore, core)
	return ESUCCESS
}

// park waits until a child of the process changes state, at most d. The
// process catches SIGCHLD for this (NewState), so the kernel's SIGCHLD
// wakes it; a timed wait in the kernel's Wait instead would wake every
// waiter of the VM each time any one's timer fired.
func (s *State) park(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.P.CaughtSignals():
		for {
			if _, ok := s.P.TakeSignal(); !ok {
				break
			}
		}
	case <-t.C:
	case <-ctx.Done():
	case <-s.P.Context().Done():
	}
}

func procKill(_ context.Context, s *State, _ mem, st []uint64) Errno {
	pid, sg := int(int32(uint32(st[0]))), uint32(st[1])
	if sg >= kernel.NSig {
		return EINVAL
	}
	err := s.P.Kill(pid, kernel.Signal(sg))
	// A process that killed itself stops before the call returns.
	s.checkKilled()
	return ErrnoOf(err)
}

func procSignalMaskV2(_ context.Context, s *State, m mem, st []uint64) Errno {
	how, lo, hi, outLo, outHi := uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[3]), uint32(st[4])
	if !m.valid(outLo, 4) || !m.valid(outHi, 4) {
		return EFAULT
	}
	old, _ := s.P.SigMask(kernel.SigBlock, 0)
	ol, oh := sigsetFromKernel(old)
	m.putU32(outLo, ol)
	m.putU32(outHi, oh)
	switch {
	case how == 3:
		return ESUCCESS
	case how > 3:
		return EINVAL
	}
	_, err := s.P.SigMask(int(how), sigsetToKernel(lo, hi))
	// Unblocking may deliver a pending fatal signal at once.
	s.checkKilled()
	return ErrnoOf(err)
}

func procGetpid(_ context.Context, s *State, m mem, st []uint64) Errno {
	if !m.putU32(uint32(st[0]), uint32(s.P.PID())) {
		return EFAULT
	}
	return ESUCCESS
}

func procGetppid(_ context.Context, s *State, m mem, st []uint64) Errno {
	if !m.putU32(uint32(st[0]), uint32(s.P.PPID())) {
		return EFAULT
	}
	return ESUCCESS
}

func fdPipe(_ context.Context, s *State, m mem, st []uint64) Errno {
	rp, wp := uint32(st[0]), uint32(st[1])
	if !m.valid(rp, 4) || !m.valid(wp, 4) {
		return EFAULT
	}
	r, w, err := s.P.Pipe(0)
	if err != nil {
		return ErrnoOf(err)
	}
	m.putU32(rp, uint32(r))
	m.putU32(wp, uint32(w))
	return ESUCCESS
}

func fdDup(_ context.Context, s *State, m mem, st []uint64) Errno {
	outp := uint32(st[1])
	if !m.valid(outp, 4) {
		return EFAULT
	}
	nfd, err := s.P.Dup(kfd(uint32(st[0])), firstPreFD, false)
	if err != nil {
		return ErrnoOf(err)
	}
	m.putU32(outp, uint32(nfd))
	return ESUCCESS
}

func fdDup2(_ context.Context, s *State, _ mem, st []uint64) Errno {
	return ErrnoOf(s.P.Dup2(kfd(uint32(st[0])), kfd(uint32(st[1])), false))
}

func fdSetfd(_ context.Context, s *State, _ mem, st []uint64) Errno {
	return ErrnoOf(s.P.FDs().SetCloexec(kfd(uint32(st[0])), uint32(st[1])&kernel.FDCloexec != 0))
}

func sleepMs(ctx context.Context, s *State, _ mem, st []uint64) Errno {
	if err := s.P.Sleep(ctx, time.Duration(uint32(st[0]))*time.Millisecond); err != nil {
		s.checkKilled()
		return ErrnoOf(err)
	}
	return ESUCCESS
}

func umask(_ context.Context, s *State, m mem, st []uint64) Errno {
	mask, set, outp := uint32(st[0]), uint32(st[1]), uint32(st[2])
	if !m.valid(outp, 4) {
		return EFAULT
	}
	old := s.P.Umask()
	if set != 0 {
		old = s.P.SetUmask(mask & 0o777)
	}
	m.putU32(outp, old)
	return ESUCCESS
}

// IsExec reports whether err, as a guest call returned it, is an exec
// request, and returns it.
func IsExec(err error) (*ExecRequest, bool) {
	var r *ExecRequest
	ok := errors.As(err, &r)
	return r, ok
}
