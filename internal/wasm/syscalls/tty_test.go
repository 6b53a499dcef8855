package syscalls

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/tetratelabs/wazero/experimental/wazerotest"

	"github.com/secexec/secexec/kernel/tty"
)

// TestTTYAttrCalls checks host_tty's get_attr, set_attr, get_size and
// set_size on a terminal descriptor (Linux's struct termios and struct
// winsize layouts, round trips) and their errors: ENOTTY off a terminal,
// EBADF for a closed descriptor, EFAULT for memory outside the guest's,
// EINVAL for an unknown tcsetattr action.
func TestTTYAttrCalls(t *testing.T) {
	k := newKernel(t, testPasswd, testGroup)
	s := NewState(context.Background(), k.Init(), nil, nil)
	defer s.Close()
	master, slave, _, err := k.NewPTY(tty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer master.DecRef()
	fds := k.Init().FDs()
	// The table takes over the reference NewPTY gave us.
	ttyFD, err := fds.Install(slave, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := k.Init().Pipe(0)
	if err != nil {
		t.Fatal(err)
	}
	mem := wazerotest.NewFixedMemory(1 << 16)
	mod := wazerotest.NewModule(mem)
	ctx := WithState(context.Background(), s)
	fn := map[string]hostFunc{}
	for _, f := range ttyFuncs() {
		fn[f.name] = f
	}
	do := func(name string, args ...uint64) Errno {
		t.Helper()
		stack := append([]uint64(nil), args...)
		if err := call(ctx, fn[name], mod, stack); err != nil {
			t.Fatal(err)
		}
		return Errno(stack[0])
	}
	fd := uint64(ttyFD)
	if e := do("get_attr", fd, 100); e != ESUCCESS {
		t.Fatalf("get_attr: %d", e)
	}
	b, _ := mem.Read(100, termiosSize)
	def := tty.DefaultTermios()
	if binary.LittleEndian.Uint32(b[0:]) != def.Iflag || binary.LittleEndian.Uint32(b[8:]) != def.Cflag ||
		binary.LittleEndian.Uint32(b[12:]) != def.Lflag || b[17+tty.VINTR] != 3 || b[17+tty.VMIN] != 1 {
		t.Errorf("termios %x", b)
	}
	// -echo, min 4: set and read back.
	binary.LittleEndian.PutUint32(b[12:], def.Lflag&^tty.ECHO)
	b[17+tty.VMIN] = 4
	if e := do("set_attr", fd, tcsaDrain, 100); e != ESUCCESS {
		t.Fatalf("set_attr: %d", e)
	}
	if got, _ := k.Init().TerminalAttr(ttyFD); got.Lflag&tty.ECHO != 0 || got.Cc[tty.VMIN] != 4 {
		t.Errorf("after set_attr: %+v", got)
	}
	mem.Write(200, []byte{30, 0, 100, 0, 0, 0, 0, 0})
	if e := do("set_size", fd, 200); e != ESUCCESS {
		t.Fatalf("set_size: %d", e)
	}
	if e := do("get_size", fd, 300); e != ESUCCESS {
		t.Fatalf("get_size: %d", e)
	}
	if ws, _ := mem.Read(300, 8); binary.LittleEndian.Uint16(ws) != 30 || binary.LittleEndian.Uint16(ws[2:]) != 100 {
		t.Errorf("get_size wrote %x", ws)
	}
	for _, c := range []struct {
		name string
		args []uint64
		want Errno
	}{
		{"get_attr", []uint64{uint64(r), 100}, ENOTTY},
		{"set_attr", []uint64{uint64(r), tcsaNow, 100}, ENOTTY},
		{"get_size", []uint64{uint64(r), 300}, ENOTTY},
		{"set_size", []uint64{uint64(r), 200}, ENOTTY},
		{"get_attr", []uint64{77, 100}, EBADF},
		{"get_attr", []uint64{fd, 1<<16 - 10}, EFAULT},
		{"set_attr", []uint64{fd, tcsaNow, 1 << 20}, EFAULT},
		{"get_size", []uint64{fd, 1<<16 - 4}, EFAULT},
		{"set_size", []uint64{fd, 0xFFFFFFFF}, EFAULT},
		{"set_attr", []uint64{fd, 3, 100}, EINVAL},
	} {
		if e := do(c.name, c.args...); e != c.want {
			t.Errorf("%s%v: errno %d, want %d", c.name, c.args, e, c.want)
		}
	}
}
