package shell

import (
	"io"
	"os"
	"sync/atomic"
)

// ofile is an open file description the shell holds: an OS descriptor of
// the shell process (close-on-exec, so children get only what a spawn's
// file actions give them) and the *os.File the shell's own builtins use.
type ofile struct {
	f    *os.File
	fd   int
	refs atomic.Int32
	std  bool // one of the process's own 0-2: never closed by the shell

	//lint:ignore U1000 used by the wasip1 System (lend)
	lendState // wasip1: O_NONBLOCK while children hold it (see lend)
}

func (o *ofile) incRef() *ofile {
	o.refs.Add(1)
	return o
}

func (o *ofile) decRef() {
	if o.refs.Add(-1) == 0 && !o.std {
		o.markClosed()
		_ = o.f.Close()
	}
}

// fdTable maps the shell's descriptor numbers to open files. Each
// execution context (subshell, pipeline stage) has its own table; entries
// are shared by reference count.
type fdTable struct {
	sys   System
	files map[int]*ofile
	// closed marks numbers a redirection closed, which a child must not
	// inherit from the process either.
	closed map[int]bool
}

func newFDTable(sys System) *fdTable {
	return &fdTable{sys: sys, files: map[int]*ofile{}, closed: map[int]bool{}}
}

func (t *fdTable) setStd(in, out, errw *os.File) {
	for n, f := range []*os.File{in, out, errw} {
		if f == nil {
			continue
		}
		o := &ofile{f: f, fd: n, std: true}
		o.refs.Store(1)
		t.files[n] = o
	}
}

func (t *fdTable) clone() *fdTable {
	c := newFDTable(t.sys)
	for n, o := range t.files {
		c.files[n] = o.incRef()
	}
	for n := range t.closed {
		c.closed[n] = true
	}
	return c
}

func (t *fdTable) closeAll() {
	for n, o := range t.files {
		o.decRef()
		delete(t.files, n)
	}
}

// set makes n refer to o (taking a reference), closing what n was.
func (t *fdTable) set(n int, o *ofile) {
	if old := t.files[n]; old != nil {
		old.decRef()
	}
	if o == nil {
		delete(t.files, n)
		t.closed[n] = true
		return
	}
	t.files[n] = o.incRef()
	delete(t.closed, n)
}

func (t *fdTable) get(n int) *ofile { return t.files[n] }

// writer returns fd n as a writer; writes to a closed fd fail as EBADF.
func (t *fdTable) writer(n int) io.Writer {
	if o := t.files[n]; o != nil {
		return o.f
	}
	return badFD{}
}

type badFD struct{}

func (badFD) Write(p []byte) (int, error) { return 0, os.ErrClosed }
func (badFD) Read(p []byte) (int, error)  { return 0, os.ErrClosed }

// saved is what a command's redirections replaced, for restoring.
type saved struct {
	n      int
	o      *ofile
	closed bool
}

// swap installs o at n and returns what to restore.
func (t *fdTable) swap(n int, o *ofile) saved {
	sv := saved{n: n, o: t.files[n], closed: t.closed[n]}
	if sv.o != nil {
		sv.o.incRef()
	}
	t.set(n, o)
	return sv
}

func (t *fdTable) restore(l []saved) {
	for i := len(l) - 1; i >= 0; i-- {
		sv := l[i]
		t.set(sv.n, sv.o)
		if sv.o != nil {
			sv.o.decRef()
		} else if !sv.closed {
			delete(t.closed, sv.n)
		}
	}
}
