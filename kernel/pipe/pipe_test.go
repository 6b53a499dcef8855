package pipe_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/pipe"
	"github.com/secexec/secexec/kernel/waiter"
)

var bg = context.Background()

// until spins (yielding) until cond holds. It has no deadline of its own:
// a bug shows up as the test binary's timeout, never as a flaky timing.
func until(cond func() bool) {
	for !cond() {
		runtime.Gosched()
	}
}

// readAll reads until EOF with blocking reads of size n.
func readAll(t *testing.T, r *pipe.Reader, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, n)
	for {
		k, err := r.Read(bg, buf)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if k == 0 {
			return out.Bytes()
		}
		out.Write(buf[:k])
	}
}

// drain reads what is buffered without blocking.
func drain(t *testing.T, r *pipe.Reader) int {
	t.Helper()
	buf := make([]byte, 32<<10)
	total := 0
	for {
		n, err := r.TryRead(buf)
		total += n
		if errors.Is(err, errno.EAGAIN) || (err == nil && n == 0) {
			return total
		}
		if err != nil {
			t.Fatalf("TryRead: %v", err)
		}
	}
}

func TestLargeTransferIsByteExact(t *testing.T) {
	const total = 50 << 20
	budget := pipe.NewBudget(pipe.DefaultBudget)
	r, w := pipe.NewPair(pipe.Options{Budget: budget})

	wantSum := make(chan [32]byte, 1)
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		data := rand.NewChaCha8([32]byte{1})
		h := sha256.New()
		buf := make([]byte, 256<<10)
		for sent := 0; sent < total; {
			n := min(1+rng.IntN(len(buf)), total-sent)
			data.Read(buf[:n])
			h.Write(buf[:n])
			if k, err := w.Write(bg, buf[:n]); k != n || err != nil {
				t.Errorf("Write = %d, %v; want %d", k, err, n)
				break
			}
			sent += n
		}
		w.Close()
		wantSum <- [32]byte(h.Sum(nil))
	}()

	rng := rand.New(rand.NewPCG(3, 4))
	h := sha256.New()
	buf := make([]byte, 300<<10)
	got := 0
	for {
		n, err := r.Read(bg, buf[:1+rng.IntN(len(buf))])
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if n == 0 {
			break
		}
		if u := budget.Used(); u > budget.Limit() {
			t.Fatalf("budget used %d > limit %d", u, budget.Limit())
		}
		h.Write(buf[:n])
		got += n
	}
	if got != total {
		t.Fatalf("read %d bytes, want %d", got, total)
	}
	if [32]byte(h.Sum(nil)) != <-wantSum {
		t.Fatal("checksum mismatch")
	}
	r.Close()
	if u := budget.Used(); u != 0 {
		t.Fatalf("budget used %d after transfer, want 0", u)
	}
}

// seq returns what `seq 1 n` prints.
func seq(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '\n')
	}
	return b
}

// TestCommandSubstitutionFits is the brush shell case: the child writes its
// whole output before anyone reads.
func TestCommandSubstitutionFits(t *testing.T) {
	want := seq(20000)
	for _, tc := range []struct {
		name  string
		lines bool
	}{{"one write", false}, {"a write per line", true}} {
		t.Run(tc.name, func(t *testing.T) {
			budget := pipe.NewBudget(pipe.DefaultBudget)
			r, w := pipe.NewPair(pipe.Options{Budget: budget})
			if tc.lines {
				for line := range bytes.Lines(want) {
					if _, err := w.Write(bg, line); err != nil {
						t.Fatal(err)
					}
				}
			} else if n, err := w.Write(bg, want); n != len(want) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			w.Close()
			if got := r.Pipe().Len(); got != len(want) {
				t.Fatalf("Len = %d, want %d", got, len(want))
			}
			if u := budget.Used(); u != int64(len(want)-pipe.MinWindow) {
				t.Fatalf("budget used %d, want %d", u, len(want)-pipe.MinWindow)
			}
			if got := readAll(t, r, 4096); !bytes.Equal(got, want) {
				t.Fatal("output differs")
			}
			if u := budget.Used(); u != 0 {
				t.Fatalf("budget used %d after drain", u)
			}
		})
	}
}

func TestFullAtCap(t *testing.T) {
	const capSize = 128 << 10
	r, w := pipe.NewPair(pipe.Options{MaxSize: capSize})
	p := r.Pipe()
	if p.Cap() != capSize {
		t.Fatalf("Cap = %d", p.Cap())
	}
	big := bytes.Repeat([]byte{'x'}, 200<<10)
	if n, err := w.TryWrite(big); n != capSize || err != nil {
		t.Fatalf("TryWrite = %d, %v; want %d, nil", n, err, capSize)
	}
	if n, err := w.TryWrite([]byte{1}); n != 0 || !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("TryWrite on full pipe = %d, %v", n, err)
	}
	if ev := w.Readiness(waiter.AllEvents); ev != 0 {
		t.Fatalf("full pipe writable: %v", ev)
	}

	// A blocking write waits; it finishes once the reader makes room.
	done := make(chan error, 1)
	go func() {
		n, err := w.Write(bg, []byte("tail"))
		if n != 4 && err == nil {
			err = fmt.Errorf("wrote %d", n)
		}
		done <- err
	}()
	buf := make([]byte, 1000)
	if n, err := r.Read(bg, buf); n != 1000 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.Close()
	got := readAll(t, r, 64<<10)
	if len(got) != capSize-1000+4 || string(got[len(got)-4:]) != "tail" {
		t.Fatalf("read %d bytes ending %q", len(got), got[max(len(got)-4, 0):])
	}
}

func TestMaxSizeClamped(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{0, pipe.DefaultMaxSize}, {-5, pipe.DefaultMaxSize}, {1, pipe.PipeBuf},
		{pipe.PipeBuf + 1, pipe.PipeBuf + 1}, {1 << 20, 1 << 20},
	} {
		if got := pipe.New(pipe.Options{MaxSize: tc.in}).Cap(); got != tc.want {
			t.Errorf("MaxSize %d: Cap = %d, want %d", tc.in, got, tc.want)
		}
	}
	// The smallest pipe still takes an atomic write of PipeBuf bytes.
	r, w := pipe.NewPair(pipe.Options{MaxSize: 1, Budget: pipe.NewBudget(0)})
	if n, err := w.TryWrite(make([]byte, pipe.PipeBuf)); n != pipe.PipeBuf || err != nil {
		t.Fatalf("TryWrite = %d, %v", n, err)
	}
	if r.Pipe().Len() != pipe.PipeBuf {
		t.Fatal("Len")
	}
}

func TestBudgetExhaustionBlocksNotFails(t *testing.T) {
	const limit = 256 << 10
	budget := pipe.NewBudget(limit)
	type end struct {
		r *pipe.Reader
		w *pipe.Writer
	}
	var ends [4]end
	for i := range ends {
		ends[i].r, ends[i].w = pipe.NewPair(pipe.Options{MaxSize: 1 << 20, Budget: budget})
	}
	big := make([]byte, 1<<20)
	// The first pipe takes its window plus the whole budget; the others
	// still get their window, and no write fails.
	for i, e := range ends {
		want := pipe.MinWindow
		if i == 0 {
			want += limit
		}
		if n, err := e.w.TryWrite(big); n != want || err != nil {
			t.Fatalf("pipe %d: TryWrite = %d, %v; want %d, nil", i, n, err, want)
		}
		if n, err := e.w.TryWrite(big[:pipe.PipeBuf]); n != 0 || !errors.Is(err, errno.EAGAIN) {
			t.Fatalf("pipe %d: second TryWrite = %d, %v; want EAGAIN", i, n, err)
		}
	}
	if u := budget.Used(); u != limit {
		t.Fatalf("used %d, want %d", u, limit)
	}

	// A blocking writer on pipe 1 waits for the budget, and a poller on
	// its write end is told when another pipe gives memory back.
	poll, pollCh := waiter.NewChannelEntry(waiter.EventOut)
	ends[1].w.EventRegister(poll)
	defer ends[1].w.EventUnregister(poll)
	done := make(chan error, 1)
	go func() {
		n, err := ends[1].w.Write(bg, big[:8<<10])
		if err == nil && n != 8<<10 {
			err = fmt.Errorf("wrote %d", n)
		}
		done <- err
	}()
	// Draining pipe 0 is the only thing that can unblock it.
	if n := drain(t, ends[0].r); n != pipe.MinWindow+limit {
		t.Fatalf("drained %d", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-pollCh
	if got := ends[1].r.Pipe().Len(); got != pipe.MinWindow+8<<10 {
		t.Fatalf("pipe 1 Len = %d", got)
	}
	if u := budget.Used(); u != 8<<10 {
		t.Fatalf("used %d, want %d", u, 8<<10)
	}

	// Memory comes back on drain, and on close without a drain.
	drain(t, ends[1].r)
	if u := budget.Used(); u != 0 {
		t.Fatalf("used %d after drain, want 0", u)
	}
	if n, _ := ends[2].w.TryWrite(big); n != limit {
		t.Fatalf("refill wrote %d, want %d", n, limit)
	}
	ends[2].r.Close()
	if u := budget.Used(); u != 0 {
		t.Fatalf("used %d after last reader closed, want 0", u)
	}
	if got := ends[2].r.Pipe().Len(); got != 0 {
		t.Fatalf("Len = %d after last reader closed", got)
	}
}

// TestBudgetSharedUnderLoad streams through many pipes at once with a
// budget far smaller than their caps: all finish, byte-exact, and the
// budget is whole again at the end.
func TestBudgetSharedUnderLoad(t *testing.T) {
	budget := pipe.NewBudget(128 << 10)
	const pipes, each = 8, 2 << 20
	var wg sync.WaitGroup
	for i := range pipes {
		r, w := pipe.NewPair(pipe.Options{Budget: budget})
		payload := make([]byte, each)
		for j := range payload {
			payload[j] = byte(i*31 + j*7)
		}
		wg.Go(func() {
			defer w.Close()
			for off := 0; off < each; off += 48 << 10 {
				if _, err := w.Write(bg, payload[off:min(off+48<<10, each)]); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			defer r.Close()
			var got bytes.Buffer
			buf := make([]byte, 20<<10)
			for {
				n, err := r.Read(bg, buf)
				if err != nil {
					t.Error(err)
					return
				}
				if u := budget.Used(); u > budget.Limit() {
					t.Errorf("used %d > limit", u)
				}
				if n == 0 {
					break
				}
				got.Write(buf[:n])
			}
			if !bytes.Equal(got.Bytes(), payload) {
				t.Errorf("pipe %d: data differs", i)
			}
		})
	}
	wg.Wait()
	if u := budget.Used(); u != 0 {
		t.Fatalf("used %d at the end", u)
	}
}

// TestAtomicWritesDoNotInterleave has many writers send framed messages of
// up to PipeBuf bytes through a small pipe while a reader reads in odd
// sizes: every message must come out whole, and each writer's in order.
func TestAtomicWritesDoNotInterleave(t *testing.T) {
	const writers, msgs, hdr = 8, 300, 5
	r, w := pipe.NewPair(pipe.Options{MaxSize: 2 * pipe.PipeBuf})
	var wg sync.WaitGroup
	for id := range writers {
		// Each writer has its own end too: a second description.
		w := w.Pipe().OpenWriter()
		wg.Go(func() {
			defer w.Close()
			rng := rand.New(rand.NewPCG(uint64(id), 9))
			for s := range msgs {
				size := hdr + rng.IntN(pipe.PipeBuf-hdr+1)
				if s%50 == 0 {
					size = pipe.PipeBuf
				}
				m := bytes.Repeat([]byte{byte(id ^ s)}, size)
				binary.BigEndian.PutUint16(m, uint16(size))
				m[2] = byte(id)
				binary.BigEndian.PutUint16(m[3:], uint16(s))
				if n, err := w.Write(bg, m); n != size || err != nil {
					t.Errorf("Write = %d, %v", n, err)
					return
				}
			}
		})
	}
	w.Close()
	stream := readAll(t, r, 1000)
	wg.Wait()

	next := make([]int, writers)
	for len(stream) > 0 {
		if len(stream) < hdr {
			t.Fatalf("truncated header: %d bytes left", len(stream))
		}
		size := int(binary.BigEndian.Uint16(stream))
		id, s := int(stream[2]), int(binary.BigEndian.Uint16(stream[3:]))
		if size < hdr || size > pipe.PipeBuf || size > len(stream) || id >= writers {
			t.Fatalf("bad frame: size %d id %d (%d bytes left)", size, id, len(stream))
		}
		if s != next[id] {
			t.Fatalf("writer %d: message %d, want %d", id, s, next[id])
		}
		next[id]++
		for _, b := range stream[hdr:size] {
			if b != byte(id^s) {
				t.Fatalf("writer %d message %d: foreign byte %#x inside", id, s, b)
			}
		}
		stream = stream[size:]
	}
	for id, n := range next {
		if n != msgs {
			t.Errorf("writer %d: %d messages, want %d", id, n, msgs)
		}
	}
}

func TestNonblocking(t *testing.T) {
	r, w := pipe.NewPair(pipe.Options{MaxSize: 2 * pipe.PipeBuf})
	if n, err := r.TryRead(make([]byte, 10)); n != 0 || !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("TryRead on empty pipe = %d, %v", n, err)
	}
	for _, tc := range []struct {
		name    string
		size    int
		want    int
		wantErr error
	}{
		{"large write fits", 6000, 6000, nil},
		{"atomic write does not fit", pipe.PipeBuf, 0, errno.EAGAIN},
		{"small atomic write does not fit", 2193, 0, errno.EAGAIN},
		{"small atomic write fits exactly", 2192, 2192, nil},
		{"full", 1, 0, errno.EAGAIN},
	} {
		n, err := w.TryWrite(make([]byte, tc.size))
		if n != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("%s: TryWrite(%d) = %d, %v; want %d, %v", tc.name, tc.size, n, err, tc.want, tc.wantErr)
		}
	}
	// Partial write: a large write takes what room there is.
	drain(t, r)
	w.TryWrite(make([]byte, 6000))
	if n, err := w.TryWrite(make([]byte, 5000)); n != 2*pipe.PipeBuf-6000 || err != nil {
		t.Fatalf("partial TryWrite = %d, %v", n, err)
	}
	if n, err := r.TryRead(nil); n != 0 || err != nil {
		t.Fatalf("zero-length TryRead = %d, %v", n, err)
	}
	if n, err := w.TryWrite(nil); n != 0 || err != nil {
		t.Fatalf("zero-length TryWrite = %d, %v", n, err)
	}
}

func TestEOF(t *testing.T) {
	r, w := pipe.NewPair(pipe.Options{})
	w2 := r.Pipe().OpenWriter()
	w.Write(bg, []byte("abc"))
	w.Close()
	buf := make([]byte, 10)
	if n, err := r.Read(bg, buf); n != 3 || err != nil || string(buf[:3]) != "abc" {
		t.Fatalf("Read = %d, %v", n, err)
	}
	// One writer is left: no EOF yet.
	if n, err := r.TryRead(buf); n != 0 || !errors.Is(err, errno.EAGAIN) {
		t.Fatalf("TryRead with a writer left = %d, %v", n, err)
	}
	// A reader blocked on the empty pipe wakes with EOF when the last
	// writer closes.
	done := make(chan error, 1)
	go func() {
		n, err := r.Read(bg, buf)
		if err == nil && n != 0 {
			err = fmt.Errorf("read %d", n)
		}
		done <- err
	}()
	w2.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if n, err := r.Read(bg, buf); n != 0 || err != nil {
			t.Fatalf("Read after EOF = %d, %v", n, err)
		}
		if n, err := r.TryRead(buf); n != 0 || err != nil {
			t.Fatalf("TryRead after EOF = %d, %v", n, err)
		}
	}
}

func TestEPIPE(t *testing.T) {
	budget := pipe.NewBudget(1 << 20)
	r, w := pipe.NewPair(pipe.Options{MaxSize: 128 << 10, Budget: budget})
	w.TryWrite(make([]byte, 128<<10)) // full

	// A writer blocked on the full pipe gets EPIPE (with its partial
	// count) when the last reader closes.
	done := make(chan error, 1)
	go func() {
		n, err := w.Write(bg, make([]byte, 8<<10))
		if n != 0 || !errors.Is(err, errno.EPIPE) {
			err = fmt.Errorf("Write = %d, %v; want 0, EPIPE", n, err)
		} else {
			err = nil
		}
		done <- err
	}()
	r.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if budget.Used() != 0 || r.Pipe().Len() != 0 {
		t.Fatalf("after last reader closed: used %d, Len %d", budget.Used(), r.Pipe().Len())
	}
	if n, err := w.Write(bg, []byte("x")); n != 0 || !errors.Is(err, errno.EPIPE) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if n, err := w.TryWrite(make([]byte, 10000)); n != 0 || !errors.Is(err, errno.EPIPE) {
		t.Fatalf("TryWrite = %d, %v", n, err)
	}
	if n, err := w.Write(bg, nil); n != 0 || err != nil {
		t.Fatalf("empty Write = %d, %v; want 0, nil", n, err)
	}
}

func TestCancelInterrupts(t *testing.T) {
	cancelled, cancel := context.WithCancel(bg)
	cancel()

	t.Run("read on empty pipe", func(t *testing.T) {
		r, _ := pipe.NewPair(pipe.Options{})
		n, err := r.Read(cancelled, make([]byte, 10))
		if n != 0 || !errors.Is(err, errno.EINTR) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Read = %d, %v", n, err)
		}
	})
	t.Run("data beats a done context", func(t *testing.T) {
		r, w := pipe.NewPair(pipe.Options{})
		w.TryWrite([]byte("hi"))
		if n, err := r.Read(cancelled, make([]byte, 10)); n != 2 || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
		if n, err := w.Write(cancelled, []byte("ok")); n != 2 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	})
	t.Run("atomic write on full pipe", func(t *testing.T) {
		_, w := pipe.NewPair(pipe.Options{MaxSize: pipe.MinWindow})
		w.TryWrite(make([]byte, pipe.MinWindow-10))
		n, err := w.Write(cancelled, make([]byte, 100))
		if n != 0 || !errors.Is(err, errno.EINTR) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	})
	t.Run("partial large write", func(t *testing.T) {
		r, w := pipe.NewPair(pipe.Options{MaxSize: pipe.MinWindow})
		ctx, cancel := context.WithCancelCause(bg)
		sig := errors.New("SIGINT")
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := w.Write(ctx, make([]byte, 100<<10))
			done <- result{n, err}
		}()
		until(func() bool { return r.Pipe().Len() == pipe.MinWindow })
		cancel(sig)
		res := <-done
		if res.n != pipe.MinWindow || !errors.Is(res.err, errno.EINTR) || !errors.Is(res.err, sig) {
			t.Fatalf("Write = %d, %v; want %d, EINTR", res.n, res.err, pipe.MinWindow)
		}
		if errno.Of(res.err) != errno.EINTR {
			t.Fatalf("errno.Of = %v", errno.Of(res.err))
		}
	})
	t.Run("blocked read", func(t *testing.T) {
		r, _ := pipe.NewPair(pipe.Options{})
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() {
			_, err := r.Read(ctx, make([]byte, 10))
			done <- err
		}()
		cancel()
		if err := <-done; !errors.Is(err, errno.EINTR) {
			t.Fatalf("Read error = %v", err)
		}
	})
}

func TestReadiness(t *testing.T) {
	all := waiter.AllEvents
	for _, tc := range []struct {
		name             string
		setup            func(r *pipe.Reader, w *pipe.Writer)
		wantR, wantW     waiter.EventMask
		closeR, closeEnd bool
	}{
		{"empty", func(*pipe.Reader, *pipe.Writer) {}, 0, waiter.EventOut, false, false},
		{"data", func(_ *pipe.Reader, w *pipe.Writer) { w.TryWrite([]byte("x")) },
			waiter.EventIn, waiter.EventOut, false, false},
		{"almost full", func(_ *pipe.Reader, w *pipe.Writer) { w.TryWrite(make([]byte, pipe.MinWindow-pipe.PipeBuf+1)) },
			waiter.EventIn, 0, false, false},
		{"room for exactly PIPE_BUF", func(_ *pipe.Reader, w *pipe.Writer) { w.TryWrite(make([]byte, pipe.MinWindow-pipe.PipeBuf)) },
			waiter.EventIn, waiter.EventOut, false, false},
		{"writer closed, empty", func(_ *pipe.Reader, w *pipe.Writer) { w.Close() },
			waiter.EventIn | waiter.EventHup, waiter.EventOut, false, false},
		{"writer closed, data", func(_ *pipe.Reader, w *pipe.Writer) { w.TryWrite([]byte("x")); w.Close() },
			waiter.EventIn | waiter.EventHup, waiter.EventOut, false, false},
		{"reader closed", func(r *pipe.Reader, _ *pipe.Writer) { r.Close() },
			0, waiter.EventOut | waiter.EventErr, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w := pipe.NewPair(pipe.Options{MaxSize: pipe.MinWindow, Budget: pipe.NewBudget(0)})
			tc.setup(r, w)
			if got := r.Readiness(all); got != tc.wantR {
				t.Errorf("reader readiness %v, want %v", got, tc.wantR)
			}
			if got := w.Readiness(all); got != tc.wantW {
				t.Errorf("writer readiness %v, want %v", got, tc.wantW)
			}
			if got := r.Readiness(waiter.EventHup); got != tc.wantR&waiter.EventHup {
				t.Errorf("reader readiness is not masked: %v", got)
			}
		})
	}
}

func TestNotifications(t *testing.T) {
	r, w := pipe.NewPair(pipe.Options{MaxSize: pipe.MinWindow})
	re, rch := waiter.NewChannelEntry(waiter.EventIn | waiter.EventHup)
	we, wch := waiter.NewChannelEntry(waiter.EventOut | waiter.EventErr)
	r.EventRegister(re)
	w.EventRegister(we)
	defer r.EventUnregister(re)
	defer w.EventUnregister(we)
	expect := func(step string, ch <-chan struct{}, want bool) {
		t.Helper()
		select {
		case <-ch:
			if !want {
				t.Errorf("%s: unexpected notification", step)
			}
		default:
			if want {
				t.Errorf("%s: no notification", step)
			}
		}
	}
	w.TryWrite(make([]byte, pipe.MinWindow))
	expect("write", rch, true)
	expect("write (writer side)", wch, false)
	r.TryRead(make([]byte, 100))
	expect("read", wch, true)
	expect("read (reader side)", rch, false)
	w.Close()
	expect("last writer closed", rch, true)

	r2, w2 := pipe.NewPair(pipe.Options{})
	we2, wch2 := waiter.NewChannelEntry(waiter.EventErr)
	w2.EventRegister(we2)
	r2.Close()
	expect("last reader closed", wch2, true)
	w2.EventUnregister(we2)
	w2.Close()
}

func TestWaitOnPipe(t *testing.T) {
	r, w := pipe.NewPair(pipe.Options{})
	ctx, cancel := context.WithTimeout(bg, 1) // expires at once
	defer cancel()
	if ev, err := waiter.Wait(ctx, r, waiter.EventIn); ev != 0 || !errors.Is(err, errno.EINTR) ||
		!errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on empty pipe = %v, %v", ev, err)
	}
	go w.Write(bg, []byte("x"))
	if ev, err := waiter.Wait(bg, r, waiter.EventIn|waiter.EventHup); ev != waiter.EventIn || err != nil {
		t.Fatalf("Wait = %v, %v", ev, err)
	}
	if ev, err := waiter.Wait(bg, w, waiter.EventOut); ev != waiter.EventOut || err != nil {
		t.Fatalf("Wait on writer = %v, %v", ev, err)
	}
}

func TestReferences(t *testing.T) {
	p := pipe.New(pipe.Options{})
	r1, r2, w := p.OpenReader(), p.OpenReader(), p.OpenWriter()
	if p.Readers() != 2 || p.Writers() != 1 {
		t.Fatalf("readers %d writers %d", p.Readers(), p.Writers())
	}
	r1.Close()
	r1.Close() // a second close is a no-op, not a second reference
	if p.Readers() != 1 {
		t.Fatalf("readers %d after closing one twice", p.Readers())
	}
	if n, err := w.Write(bg, []byte("x")); n != 1 || err != nil {
		t.Fatalf("Write with one reader left = %d, %v", n, err)
	}
	if _, err := r1.Read(bg, make([]byte, 1)); !errors.Is(err, errno.EBADF) {
		t.Fatalf("Read on closed end: %v", err)
	}
	if _, err := r1.TryRead(make([]byte, 1)); !errors.Is(err, errno.EBADF) {
		t.Fatalf("TryRead on closed end: %v", err)
	}
	r2.Close()
	if _, err := w.Write(bg, []byte("x")); !errors.Is(err, errno.EPIPE) {
		t.Fatalf("Write with no readers: %v", err)
	}
	w.Close()
	if _, err := w.Write(bg, []byte("x")); !errors.Is(err, errno.EBADF) {
		t.Fatalf("Write on closed end: %v", err)
	}
	if _, err := w.TryWrite([]byte("x")); !errors.Is(err, errno.EBADF) {
		t.Fatalf("TryWrite on closed end: %v", err)
	}
	if p.Readers() != 0 || p.Writers() != 0 || r2.Pipe() != p || w.Pipe() != p {
		t.Fatal("bad final state")
	}
}

// TestCloseWakesOwnEnd covers a Close racing an operation in flight on the
// same end: the operation ends with EBADF instead of sleeping forever.
func TestCloseWakesOwnEnd(t *testing.T) {
	p := pipe.New(pipe.Options{MaxSize: pipe.PipeBuf})
	r, r2 := p.OpenReader(), p.OpenReader()
	w, w2 := p.OpenWriter(), p.OpenWriter()
	defer r2.Close()
	defer w2.Close()
	rdone := make(chan error, 1)
	go func() {
		_, err := r.Read(bg, make([]byte, 1))
		rdone <- err
	}()
	w.TryWrite(make([]byte, pipe.PipeBuf))
	wdone := make(chan error, 1)
	go func() {
		_, err := w.Write(bg, make([]byte, 10))
		wdone <- err
	}()
	// The reader may have taken a byte before the close, or be blocked.
	r.Close()
	if err := <-rdone; err != nil && !errors.Is(err, errno.EBADF) {
		t.Fatalf("Read: %v", err)
	}
	// The pipe is full (one byte short at most), so the write cannot
	// complete: it must end with EBADF.
	w.Close()
	if err := <-wdone; !errors.Is(err, errno.EBADF) {
		t.Fatalf("Write: %v", err)
	}
}

func TestZeroAllocIdleAndSmallPingPong(t *testing.T) {
	r, w := pipe.NewPair(pipe.Options{Budget: pipe.NewBudget(pipe.DefaultBudget)})
	msg, buf := []byte("hello\n"), make([]byte, 64)
	w.TryWrite(msg) // first write allocates the first small chunk
	r.TryRead(buf)
	allocs := testing.AllocsPerRun(100, func() {
		w.Write(bg, msg)
		r.Read(bg, buf)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per small round trip, want 0", allocs)
	}
	if allocs := testing.AllocsPerRun(100, func() { pipe.NewPair(pipe.Options{}) }); allocs > 3 {
		t.Fatalf("%v allocations for a pipe pair", allocs)
	}
}

func BenchmarkSmallRoundTrip(b *testing.B) {
	r, w := pipe.NewPair(pipe.Options{Budget: pipe.NewBudget(pipe.DefaultBudget)})
	msg, buf := make([]byte, 64), make([]byte, 64)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		w.Write(bg, msg)
		r.Read(bg, buf)
	}
}

func BenchmarkThroughput64KiB(b *testing.B) {
	r, w := pipe.NewPair(pipe.Options{Budget: pipe.NewBudget(pipe.DefaultBudget)})
	msg := make([]byte, 64<<10)
	b.SetBytes(int64(len(msg)))
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if n, err := r.Read(bg, buf); n == 0 || err != nil {
				return
			}
		}
	}()
	for b.Loop() {
		if _, err := w.Write(bg, msg); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
}

var _ io.Closer = (*pipe.Reader)(nil)
var _ io.Closer = (*pipe.Writer)(nil)
