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

func init() {
	register("write", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		s, err := argString(args, 1)
		if err != nil {
			return nil, err
		}
		n, err := r.writeAll(fd, []byte(s))
		if err != nil {
			return nil, err
		}
		return r.num(n), nil
	})
	register("writeScratch", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		pos, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || n < 0 || n > len(r.scratch) {
			return nil, errno.EINVAL
		}
		var w int
		var err error
		if pos >= 0 {
			w, err = r.p.Pwrite(r.ctx, fd, r.scratch[:n], int64(pos))
		} else {
			w, err = r.writeAll(fd, r.scratch[:n])
		}
		if err != nil && w == 0 {
			return nil, err
		}
		return r.num(w), nil
	})
	register("read", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		pos, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || n < 0 {
			return nil, errno.EINVAL
		}
		if n > len(r.scratch) {
			n = len(r.scratch)
		}
		var got int
		var err error
		if pos >= 0 {
			got, err = r.p.Pread(r.ctx, fd, r.scratch[:n], int64(pos))
		} else {
			got, err = r.p.Read(r.ctx, fd, r.scratch[:n])
		}
		if err != nil && got == 0 {
			return nil, err
		}
		return r.num(got), nil
	})
	register("exit", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		code, err := argInt(args, 0)
		if err != nil {
			code = 0
		}
		r.exited = true
		r.exitCode = code & 0xff
		r.terminate(termExit)
		return nil, nil
	})
	register("cwd", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		return r.string(r.p.Cwd())
	})
	register("chdir", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		dir, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Chdir(r.ctx, dir)
	})
	register("umask", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		m, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		if m < 0 {
			return r.num(int(r.p.Umask())), nil
		}
		return r.num(int(r.p.SetUmask(uint32(m) & 0o777))), nil
	})
	register("hrtime", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		// The VM's monotonic clock in nanoseconds, under its policy
		// (kernel/clock): coarse steps, real, or frozen. Date, performance
		// and process.uptime are all built on it.
		return r.float(float64(r.p.Kernel().Clock().Monotonic().Nanoseconds())), nil
	})
	register("memoryUsage", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		hs := r.iso.GetHeapStatistics()
		r.putF64(float64(hs.TotalPhysicalSize+hs.ExternalMemory+hs.MallocedMemory), float64(hs.TotalHeapSize), float64(hs.UsedHeapSize), float64(hs.ExternalMemory))
		return nil, nil
	})
	register("kill", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		pid, err1 := argInt(args, 0)
		sig, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil || sig < 0 || sig > 64 {
			return nil, errno.EINVAL
		}
		return nil, r.p.Kill(pid, kernel.Signal(sig))
	})
	// getPriority and setPriority are os.getPriority/os.setPriority:
	// getpriority(2) and setpriority(2) on the kernel's processes.
	register("getPriority", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		pid, err := argInt(args, 0)
		if err != nil {
			return nil, errno.EINVAL
		}
		n, err := r.p.Getpriority(pid)
		if err != nil {
			return nil, err
		}
		return r.num(n), nil
	})
	register("setPriority", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		pid, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil {
			return nil, errno.EINVAL
		}
		return nil, r.p.Setpriority(pid, n)
	})
	register("signalWatch", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sig, err := argInt(args, 0)
		if err != nil || sig <= 0 || sig > 64 {
			return nil, errno.EINVAL
		}
		if r.worker != nil {
			// As in Node, signals are not delivered to workers: the
			// process's main thread keeps its dispositions.
			return nil, nil
		}
		return nil, r.watchSignal(kernel.Signal(sig), argBool(args, 1))
	})
	register("random", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		n, err := argInt(args, 0)
		if err != nil || n < 0 || n > len(r.scratch) {
			return nil, errno.EINVAL
		}
		_, _ = rand.Read(r.scratch[:n])
		return nil, nil
	})
	register("randomInt", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		lo, err1 := argInt(args, 0)
		hi, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil || hi <= lo {
			return nil, errno.EINVAL
		}
		v, err := rand.Int(rand.Reader, big.NewInt(int64(hi-lo)))
		if err != nil {
			return nil, errno.EIO
		}
		return r.num(lo + int(v.Int64())), nil
	})
	register("utf8Encode", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		s, err := argString(args, 0)
		if err != nil {
			return nil, err
		}
		// v8go converts with WriteUtf8, which replaces lone surrogates
		// with U+FFFD, as TextEncoder must.
		return r.bytesResult([]byte(s))
	})
	register("utf8Decode", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		n, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		return r.string(decodeUTF8(b))
	})
	register("utf8Valid", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		n, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		return r.boolean(utf8.Valid(b)), nil
	})
	register("osInfo", func(r *rt, args []*v8.Value) (*v8.Value, error) {
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
	})
	register("timerStart", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err := argInt(args, 0)
		ms := argFloat(args, 1)
		if err != nil || math.IsNaN(ms) || ms < 0 || ms > math.MaxInt32 {
			return nil, errno.EINVAL
		}
		return nil, r.timerStart(id, ms, argBool(args, 2))
	})
	register("timerStop", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		if t, ok := r.timerMap[id]; ok {
			r.timerStopT(t)
		}
		return nil, nil
	})
	register("timerRef", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		id, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		r.timerRef(id, argBool(args, 1))
		return nil, nil
	})
}
