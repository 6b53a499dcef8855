package syscalls

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/tty"
	"github.com/secexec/secexec/kernel/vfs"
)

func userFuncs() []hostFunc {
	return []hostFunc{
		{"getuid", sig(1), errnoResult, sysFunc(idFunc(func(p *kernel.Process) uint32 { return p.UID() }))},
		{"geteuid", sig(1), errnoResult, sysFunc(idFunc(func(p *kernel.Process) uint32 { return p.UID() }))},
		{"getgid", sig(1), errnoResult, sysFunc(idFunc(func(p *kernel.Process) uint32 { return p.GID() }))},
		{"getegid", sig(1), errnoResult, sysFunc(idFunc(func(p *kernel.Process) uint32 { return p.GID() }))},
		{"getgroups", sig(3), errnoResult, sysFunc(getgroups)},
		{"setuid", sig(1), errnoResult, sysFunc(setID(func(p *kernel.Process) uint32 { return p.UID() }))},
		{"setgid", sig(1), errnoResult, sysFunc(setID(func(p *kernel.Process) uint32 { return p.GID() }))},
		{"setgroups", sig(2), errnoResult, sysFunc(setgroups)},
		{"isatty", sig(2), errnoResult, sysFunc(isatty)},
		{"getpwuid", sig(4), errnoResult, sysFunc(lookupByID(passwdFile, 2))},
		{"getgrgid", sig(4), errnoResult, sysFunc(lookupByID(groupFile, 2))},
		{"getpwnam", sig(5), errnoResult, sysFunc(lookupByName(passwdFile))},
		{"getgrnam", sig(5), errnoResult, sysFunc(lookupByName(groupFile))},
		{"getpwent", sig(4), errnoResult, sysFunc(lookupByIndex(passwdFile))},
		{"getgrent", sig(4), errnoResult, sysFunc(lookupByIndex(groupFile))},
	}
}

func idFunc(get func(*kernel.Process) uint32) func(context.Context, *State, mem, []uint64) Errno {
	return func(_ context.Context, s *State, m mem, st []uint64) Errno {
		if !m.putU32(uint32(st[0]), get(s.P)) {
			return EFAULT
		}
		return ESUCCESS
	}
}

// setID allows only the no-op change: the kernel has no credential
// changes, and an unprivileged Linux process may only "change" to itself.
func setID(get func(*kernel.Process) uint32) func(context.Context, *State, mem, []uint64) Errno {
	return func(_ context.Context, s *State, _ mem, st []uint64) Errno {
		if uint32(st[0]) == get(s.P) {
			return ESUCCESS
		}
		return EPERM
	}
}

func setgroups(context.Context, *State, mem, []uint64) Errno { return EPERM }

func (s *State) groups() []uint32 {
	out := []uint32{s.P.GID()}
	for _, g := range s.P.Caller().Groups {
		if g != s.P.GID() {
			out = append(out, g)
		}
	}
	return out
}

func getgroups(_ context.Context, s *State, m mem, st []uint64) Errno {
	size, ptr, countp := uint32(st[0]), uint32(st[1]), uint32(st[2])
	gs := s.groups()
	if !m.valid(countp, 4) {
		return EFAULT
	}
	if size == 0 {
		m.putU32(countp, uint32(len(gs)))
		return ESUCCESS
	}
	if int(size) < len(gs) {
		return EINVAL
	}
	if !m.valid(ptr, uint32(len(gs))*4) {
		return EFAULT
	}
	for i, g := range gs {
		m.putU32(ptr+uint32(i)*4, g)
	}
	m.putU32(countp, uint32(len(gs)))
	return ESUCCESS
}

func isatty(_ context.Context, s *State, m mem, st []uint64) Errno {
	outp := uint32(st[1])
	if !m.valid(outp, 4) {
		return EFAULT
	}
	v := uint32(0)
	if f, e := s.file(uint32(st[0])); e == ESUCCESS {
		if isTerminal(f) {
			v = 1
		}
		f.DecRef()
	}
	m.putU32(outp, v)
	return ESUCCESS
}

// The account database is the VM's own /etc/passwd and /etc/group, so
// what ls -l and id print always agrees with the files a guest can read.
const (
	passwdFile = "/etc/passwd"
	groupFile  = "/etc/group"
	// maxAccountFile bounds how much of either file is read.
	maxAccountFile = 64 << 10
	maxNameLen     = 256
)

// accountLines returns the well-formed lines of an account file. The
// files are read as the system would (like nscd), not with the guest's
// permissions: they are the system's database, world-readable on Linux.
func (s *State) accountLines(_ context.Context, name string) []string {
	// A context without the process: the lookup is the system's, not the
	// guest's, so the guest's file policy does not apply to it.
	ctx := context.Background()
	f, err := s.P.Kernel().VFS().Open(ctx, vfs.Root, name, vfs.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil || st.Type() != vfs.TypeRegular {
		return nil
	}
	// Enumerations (getpwent 0, 1, ...) ask once per entry: the parsed
	// file is kept while it is unchanged, so a large file costs one parse,
	// not one per entry.
	key := accountKey{name: name, ino: st.Ino, size: st.Size, mtime: st.Mtime.UnixNano(), ctime: st.Ctime.UnixNano()}
	if c, ok := s.accounts[name]; ok && c.key == key {
		return c.lines
	}
	buf := make([]byte, min(max(st.Size, 0), maxAccountFile))
	n := 0
	for n < len(buf) {
		k, err := f.Pread(ctx, buf[n:], int64(n))
		n += k
		if k == 0 || err != nil {
			break
		}
	}
	buf = buf[:n]
	fields := 7
	if name == groupFile {
		fields = 4
	}
	var out []string
	for _, line := range strings.Split(string(buf), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") || strings.Count(line, ":") != fields-1 {
			continue
		}
		out = append(out, line)
	}
	if s.accounts == nil {
		s.accounts = make(map[string]accountCache, 2)
	}
	s.accounts[name] = accountCache{key: key, lines: out}
	return out
}

// accountKey identifies one version of an account file.
type accountKey struct {
	name         string
	ino          uint64
	size         int64
	mtime, ctime int64
}

// accountCache is an account file as a process last parsed it.
type accountCache struct {
	key   accountKey
	lines []string
}

// putLine copies one database line into the guest's buffer; a line that
// does not fit is ERANGE rather than silently truncated.
func putLine(m mem, line string, buf, bufLen, retp uint32) Errno {
	if !m.valid(retp, 4) {
		return EFAULT
	}
	out, ok := m.bytes(buf, bufLen)
	if !ok {
		return EFAULT
	}
	if len(line) > len(out) {
		return ERANGE
	}
	copy(out, line)
	m.putU32(retp, uint32(len(line)))
	return ESUCCESS
}

func field(line string, i int) string {
	for ; i > 0; i-- {
		_, line, _ = strings.Cut(line, ":")
	}
	f, _, _ := strings.Cut(line, ":")
	return f
}

func lookupByID(file string, idField int) func(context.Context, *State, mem, []uint64) Errno {
	return func(ctx context.Context, s *State, m mem, st []uint64) Errno {
		id := strconv.FormatUint(uint64(uint32(st[0])), 10)
		for _, l := range s.accountLines(ctx, file) {
			if field(l, idField) == id {
				return putLine(m, l, uint32(st[1]), uint32(st[2]), uint32(st[3]))
			}
		}
		return ENOENT
	}
}

func lookupByName(file string) func(context.Context, *State, mem, []uint64) Errno {
	return func(ctx context.Context, s *State, m mem, st []uint64) Errno {
		name, e := m.str(uint32(st[0]), uint32(st[1]), maxNameLen)
		if e != ESUCCESS {
			if e == ENAMETOOLONG {
				return ENOENT
			}
			return e
		}
		for _, l := range s.accountLines(ctx, file) {
			if field(l, 0) == name {
				return putLine(m, l, uint32(st[2]), uint32(st[3]), uint32(st[4]))
			}
		}
		return ENOENT
	}
}

func lookupByIndex(file string) func(context.Context, *State, mem, []uint64) Errno {
	return func(ctx context.Context, s *State, m mem, st []uint64) Errno {
		lines := s.accountLines(ctx, file)
		i := uint32(st[0])
		if uint64(i) >= uint64(len(lines)) {
			return ENOENT
		}
		return putLine(m, lines[i], uint32(st[1]), uint32(st[2]), uint32(st[3]))
	}
}

// RawTerminal is implemented by terminal files whose line discipline can
// be switched to raw mode.
type RawTerminal interface {
	Terminal
	SetRaw(on bool) error
}

func ttyFuncs() []hostFunc {
	return []hostFunc{
		{"read", sig(3), errnoResult, valueFunc(0, ttyRead)},
		{"set_raw_mode", sig(1), errnoResult, sysFunc(ttySetRawMode)},
		// secexec's extensions: tcgetattr, tcsetattr and the window size
		// ioctls, which a WASI module cannot reach otherwise
		// (docs/architecture.md, "Terminals").
		{"get_attr", sig(2), errnoResult, sysFunc(ttyGetAttr)},
		{"set_attr", sig(3), errnoResult, sysFunc(ttySetAttr)},
		{"get_size", sig(2), errnoResult, sysFunc(ttyGetSize)},
		{"set_size", sig(2), errnoResult, sysFunc(ttySetSize)},
	}
}

// termiosSize is the size of Linux's struct termios as TCGETS fills it:
// c_iflag, c_oflag, c_cflag, c_lflag (u32 each), c_line, c_cc[19].
const termiosSize = 36

// winsizeSize is struct winsize: ws_row, ws_col, ws_xpixel, ws_ypixel
// (u16 each).
const winsizeSize = 8

// tcsetattr's actions.
const (
	tcsaNow   = 0
	tcsaDrain = 1
	tcsaFlush = 2
)

// ttyGetAttr is tcgetattr(fd, buf): buf gets the terminal's termios.
func ttyGetAttr(_ context.Context, s *State, m mem, st []uint64) Errno {
	fd, ptr := int(int32(st[0])), uint32(st[1])
	buf, ok := m.bytes(ptr, termiosSize)
	if !ok {
		return EFAULT
	}
	tm, err := s.P.TerminalAttr(fd)
	if err != nil {
		return ErrnoOf(err)
	}
	binary.LittleEndian.PutUint32(buf[0:], tm.Iflag)
	binary.LittleEndian.PutUint32(buf[4:], tm.Oflag)
	binary.LittleEndian.PutUint32(buf[8:], tm.Cflag)
	binary.LittleEndian.PutUint32(buf[12:], tm.Lflag)
	buf[16] = tm.Line
	copy(buf[17:termiosSize], tm.Cc[:])
	return ESUCCESS
}

// ttySetAttr is tcsetattr(fd, when, buf).
func ttySetAttr(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, when, ptr := int(int32(st[0])), uint32(st[1]), uint32(st[2])
	if when > tcsaFlush {
		return EINVAL
	}
	buf, ok := m.bytes(ptr, termiosSize)
	if !ok {
		return EFAULT
	}
	tm := tty.Termios{
		Iflag: binary.LittleEndian.Uint32(buf[0:]),
		Oflag: binary.LittleEndian.Uint32(buf[4:]),
		Cflag: binary.LittleEndian.Uint32(buf[8:]),
		Lflag: binary.LittleEndian.Uint32(buf[12:]),
		Line:  buf[16],
	}
	copy(tm.Cc[:], buf[17:termiosSize])
	return ErrnoOf(s.P.SetTerminalAttr(ctx, fd, tm, when == tcsaFlush))
}

// ttyGetSize is ioctl(fd, TIOCGWINSZ, buf).
func ttyGetSize(_ context.Context, s *State, m mem, st []uint64) Errno {
	fd, ptr := int(int32(st[0])), uint32(st[1])
	buf, ok := m.bytes(ptr, winsizeSize)
	if !ok {
		return EFAULT
	}
	ws, err := s.P.TerminalSize(fd)
	if err != nil {
		return ErrnoOf(err)
	}
	clear(buf)
	binary.LittleEndian.PutUint16(buf[0:], ws.Rows)
	binary.LittleEndian.PutUint16(buf[2:], ws.Cols)
	return ESUCCESS
}

// ttySetSize is ioctl(fd, TIOCSWINSZ, buf); the pixel sizes are ignored.
func ttySetSize(_ context.Context, s *State, m mem, st []uint64) Errno {
	fd, ptr := int(int32(st[0])), uint32(st[1])
	buf, ok := m.bytes(ptr, winsizeSize)
	if !ok {
		return EFAULT
	}
	ws := tty.Winsize{Rows: binary.LittleEndian.Uint16(buf[0:]), Cols: binary.LittleEndian.Uint16(buf[2:])}
	return ErrnoOf(s.P.SetTerminalSize(fd, ws))
}

// ttyRead is a timed read of stdin: it returns the bytes read, 0 on time
// out or end of file (a count, not an errno).
func ttyRead(ctx context.Context, s *State, m mem, st []uint64) uint64 {
	buf, ok := m.bytes(uint32(st[0]), uint32(st[1]))
	if !ok || len(buf) == 0 {
		return 0
	}
	if len(buf) > maxIO {
		buf = buf[:maxIO]
	}
	timeout := time.Duration(-1)
	if t := uint32(st[2]); t != 0xFFFFFFFF {
		timeout = time.Duration(t) * time.Millisecond
	}
	fds := []kernel.PollFD{{FD: 0, Events: 0x01}}
	n, err := s.P.Poll(ctx, fds, timeout)
	if err != nil {
		s.checkKilled()
		return 0
	}
	if n == 0 || fds[0].Revents&0x01 == 0 {
		return 0
	}
	got, err := s.P.Read(ctx, 0, buf)
	if err != nil {
		s.errOf(err)
		return 0
	}
	return uint64(got)
}

func ttySetRawMode(_ context.Context, s *State, _ mem, st []uint64) Errno {
	f, e := s.file(0)
	if e != ESUCCESS {
		return e
	}
	defer f.DecRef()
	if !isTerminal(f) {
		return ENOTTY
	}
	on := uint32(st[0]) != 0
	if on {
		// Only an interactive line editor (brush) turns raw mode on: from
		// here the kernel keeps ^C, ^\ and ^Z away from it and sends them
		// to the jobs it runs, since a WebAssembly guest has no handlers.
		s.P.SetTerminalShell(true)
	}
	if r, ok := f.(RawTerminal); ok {
		return ErrnoOf(r.SetRaw(on))
	}
	return ESUCCESS
}
