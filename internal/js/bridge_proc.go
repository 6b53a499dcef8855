package js

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"unicode/utf8"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// writeAll writes b to fd, looping over short writes.
func (r *rt) writeAll(fd int, b []byte) (int, error) {
	if r.parentCtl != nil && r.stdioToParent(fd, b) {
		return len(b), nil
	}
	total := 0
	for len(b) > 0 {
		n, err := r.p.Write(r.ctx, fd, b)
		total += n
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, errno.EIO
		}
		b = b[n:]
	}
	return total, nil
}

// putF64 writes float64s at the start of the scratch buffer, where
// JavaScript reads them through a Float64Array.
func (r *rt) putF64(vals ...float64) {
	for i, v := range vals {
		binary.LittleEndian.PutUint64(r.scratch[i*8:], math.Float64bits(v))
	}
}

// bridgeWrite writes string s to fd, all of it.
func bridgeWrite(r *rt, a *callArgs) (*v8.Value, error) {
	n, err := r.writeAll(a.int(0), []byte(a.str(1)))
	if err != nil {
		return nil, err
	}
	return r.num(n), nil
}

// bridgeWriteScratch writes the first n bytes of the scratch buffer to
// fd at pos, or at its offset (all of them) when pos < 0.
func bridgeWriteScratch(r *rt, a *callArgs) (*v8.Value, error) {
	fd, n, pos := a.int(0), a.int(1), a.int(2)
	if n < 0 || n > len(r.scratch) {
		return nil, errno.EINVAL
	}
	var w int
	var err error
	if pos >= 0 {
		w, err = r.p.Pwrite(r.ctx, fd, r.scratch[:n], int64(pos))
	} else {
		w, err = r.writeAll(fd, r.scratch[:n])
	}
	return r.countOrErr(w, err)
}

// bridgeRead reads up to n bytes of fd, at pos or at its offset when
// pos < 0, into the scratch buffer.
func bridgeRead(r *rt, a *callArgs) (*v8.Value, error) {
	fd, n, pos := a.int(0), a.int(1), a.int(2)
	if n < 0 {
		return nil, errno.EINVAL
	}
	n = min(n, len(r.scratch))
	var got int
	var err error
	if pos >= 0 {
		got, err = r.p.Pread(r.ctx, fd, r.scratch[:n], int64(pos))
	} else {
		got, err = r.p.Read(r.ctx, fd, r.scratch[:n])
	}
	return r.countOrErr(got, err)
}

// countOrErr is the result of a read or write that moved n bytes: a
// short count wins over the error that cut it short.
func (r *rt) countOrErr(n int, err error) (*v8.Value, error) {
	if err != nil && n == 0 {
		return nil, err
	}
	return r.num(n), nil
}

// bridgeExit ends the process with code (0 when absent).
func bridgeExit(r *rt, a *callArgs) (*v8.Value, error) {
	r.exited = true
	r.exitCode = a.int(0) & 0xff
	r.terminate(termExit)
	return nil, nil
}

func bridgeCwd(r *rt, _ *callArgs) (*v8.Value, error) {
	return r.string(r.p.Cwd())
}

func bridgeChdir(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Chdir(r.ctx, a.path(0))
}

// bridgeUmask sets the umask and returns the old one; mask < 0 only
// reads it.
func bridgeUmask(r *rt, a *callArgs) (*v8.Value, error) {
	m := a.int(0)
	if m < 0 {
		return r.num(int(r.p.Umask())), nil
	}
	return r.num(int(r.p.SetUmask(uint32(m) & 0o777))), nil
}

// bridgeHrtime is the VM's monotonic clock in nanoseconds, under its
// policy (kernel/clock): coarse steps, real, or frozen. Date, performance
// and process.uptime are all built on it.
func bridgeHrtime(r *rt, _ *callArgs) (*v8.Value, error) {
	return r.float(float64(r.p.Kernel().Clock().Monotonic().Nanoseconds())), nil
}

func bridgeMemoryUsage(r *rt, _ *callArgs) (*v8.Value, error) {
	hs := r.iso.GetHeapStatistics()
	r.putF64(float64(hs.TotalPhysicalSize+hs.ExternalMemory+hs.MallocedMemory), float64(hs.TotalHeapSize), float64(hs.UsedHeapSize), float64(hs.ExternalMemory))
	return nil, nil
}

func bridgeKill(r *rt, a *callArgs) (*v8.Value, error) {
	sig := a.int(1)
	if sig < 0 || sig > 64 {
		return nil, errno.EINVAL
	}
	return nil, r.p.Kill(a.int(0), kernel.Signal(sig))
}

// bridgeGetPriority and bridgeSetPriority are
// os.getPriority/os.setPriority: getpriority(2) and setpriority(2) on the
// kernel's processes.
func bridgeGetPriority(r *rt, a *callArgs) (*v8.Value, error) {
	n, err := r.p.Getpriority(a.int(0))
	if err != nil {
		return nil, err
	}
	return r.num(n), nil
}

func bridgeSetPriority(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Setpriority(a.int(0), a.int(1))
}

func bridgeSignalWatch(r *rt, a *callArgs) (*v8.Value, error) {
	sig := a.int(0)
	if sig <= 0 || sig > 64 {
		return nil, errno.EINVAL
	}
	if r.worker != nil {
		// As in Node, signals are not delivered to workers: the
		// process's main thread keeps its dispositions.
		return nil, nil
	}
	return nil, r.watchSignal(kernel.Signal(sig), a.bool(1))
}

// bridgeRandom fills the first n bytes of the scratch buffer with
// random bytes.
func bridgeRandom(r *rt, a *callArgs) (*v8.Value, error) {
	n := a.int(0)
	if n < 0 || n > len(r.scratch) {
		return nil, errno.EINVAL
	}
	_, _ = rand.Read(r.scratch[:n])
	return nil, nil
}

// bridgeRandomInt returns a uniformly random integer in [lo, hi).
func bridgeRandomInt(r *rt, a *callArgs) (*v8.Value, error) {
	lo, hi := a.int(0), a.int(1)
	if hi <= lo {
		return nil, errno.EINVAL
	}
	v, err := rand.Int(rand.Reader, big.NewInt(int64(hi-lo)))
	if err != nil {
		return nil, errno.EIO
	}
	return r.num(lo + int(v.Int64())), nil
}

func bridgeUtf8Encode(r *rt, a *callArgs) (*v8.Value, error) {
	// v8go converts with WriteUtf8, which replaces lone surrogates
	// with U+FFFD, as TextEncoder must.
	return r.bytesResult([]byte(a.str(0)))
}

func bridgeUtf8Decode(r *rt, a *callArgs) (*v8.Value, error) {
	return r.string(decodeUTF8(a.bytes(0)))
}

func bridgeUtf8Valid(r *rt, a *callArgs) (*v8.Value, error) {
	return r.boolean(utf8.Valid(a.bytes(0))), nil
}

// bridgeOsInfo is what the os module reports of the machine, as JSON.
func bridgeOsInfo(r *rt, _ *callArgs) (*v8.Value, error) {
	k := r.p.Kernel()
	home := "/home/user"
	user := "user"
	if r.p.UID() == 0 {
		home, user = "/root", "root"
	}
	info := map[string]any{
		"hostname": k.Hostname(),
		"totalmem": 512 << 20,
		"freemem":  256 << 20,
		"uptime":   math.Floor(k.Clock().Elapsed().Seconds()*100) / 100, // /proc/uptime's centiseconds, as libuv reads them
		"cpus":     1,
		"release":  "6.1.0-secexec",
		"version":  "#1 SMP secexec",
		"uid":      r.p.UID(),
		"gid":      r.p.GID(),
		"home":     home,
		"user":     user,
	}
	b, _ := json.Marshal(info)
	return r.string(string(b))
}

// bridgeTimerStart (re)starts timer id to fire after ms milliseconds.
func bridgeTimerStart(r *rt, a *callArgs) (*v8.Value, error) {
	ms := a.float(1)
	if math.IsNaN(ms) || ms < 0 || ms > math.MaxInt32 {
		return nil, errno.EINVAL
	}
	return nil, r.timerStart(a.int(0), ms, a.bool(2))
}

func bridgeTimerStop(r *rt, a *callArgs) (*v8.Value, error) {
	if t, ok := r.timerMap[a.int(0)]; ok {
		r.timerStopT(t)
	}
	return nil, nil
}

func bridgeTimerRef(r *rt, a *callArgs) (*v8.Value, error) {
	r.timerRef(a.int(0), a.bool(1))
	return nil, nil
}
