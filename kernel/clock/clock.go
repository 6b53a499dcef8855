// Package clock is the one clock of a VM. Every place a guest can read
// the time from — node's Date, performance and process.hrtime (the V8
// bridge), the WASI clocks (clock_time_get, clock_res_get, poll_oneoff),
// file times (memfs, overlay, hostfs), the times of pipes, sockets and
// terminals, and /proc — reads it from here, under one policy:
//
//   - Coarse (the default): real time, monotonic, in steps of a resolution
//     of at least a millisecond, so deadline loops end and durations print
//     sensibly while no guest gets a fine timer;
//   - Real: the host's clock at full resolution;
//   - Frozen: time stands still at the VM's boot, for every guest.
//
// The wall clock a guest sees is the VM's boot time (truncated to the
// resolution) plus the coarse monotonic time since then, so it never goes
// backwards even when the host's clock is stepped.
package clock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// Policy says how a VM's clock shows time to its guests. The zero value is
// Coarse.
type Policy uint8

// The clock policies.
const (
	// Coarse is real time in steps of the clock's resolution (1 ms by
	// default), never going backwards.
	Coarse Policy = iota
	// Real is the host's clock at full resolution.
	Real
	// Frozen stops the clock at the VM's boot: every read, in every
	// process, gives the same instant, and every duration is zero.
	Frozen
)

// ErrBadPolicy is returned for a policy that is none of Coarse, Real and
// Frozen; it also matches errno.EINVAL.
var ErrBadPolicy = errors.New("clock: unknown clock policy")

// ErrBadResolution is returned for a Coarse or Frozen resolution finer
// than MinResolution; it also matches errno.EINVAL.
var ErrBadResolution = errors.New("clock: resolution finer than 1ms")

// MinResolution is the finest resolution a Coarse clock may have, and its
// default.
const MinResolution = time.Millisecond

var names = [...]string{Coarse: "coarse", Real: "real", Frozen: "frozen"}

// String returns "coarse", "real" or "frozen".
func (p Policy) String() string {
	if int(p) < len(names) {
		return names[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// Valid reports whether p is one of the policies.
func (p Policy) Valid() bool { return int(p) < len(names) }

// ParsePolicy reads "coarse", "real" or "frozen"; the empty string is
// Coarse.
func ParsePolicy(s string) (Policy, error) {
	if s == "" {
		return Coarse, nil
	}
	for i, n := range names {
		if s == n {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want coarse, real or frozen): %w", ErrBadPolicy, s, errno.EINVAL)
}

// MarshalText returns the policy's name.
func (p Policy) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("%w %d: %w", ErrBadPolicy, uint8(p), errno.EINVAL)
	}
	return []byte(p.String()), nil
}

// UnmarshalText parses a policy's name (see ParsePolicy).
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Options configure a Clock.
type Options struct {
	// Policy; the zero value is Coarse.
	Policy Policy
	// Resolution is the step of a Coarse clock (and what a Frozen one
	// reports); zero means MinResolution, finer is refused. A Real clock
	// ignores it: its resolution is a nanosecond.
	Resolution time.Duration
}

// Clock is the clock of one VM. It holds no mutable state, so its methods
// are safe for concurrent use.
type Clock struct {
	policy Policy
	res    time.Duration
	// boot is when the VM booted, with Go's monotonic reading: elapsed
	// time is measured on it, so host clock steps do not show.
	boot time.Time
	// bootWall is boot's wall time truncated to res: the origin of the
	// guests' wall clock.
	bootWall time.Time
	// seed places the jittered edges of a Coarse clock's steps.
	seed uint64
}

// New returns a clock whose boot is now.
func New(opts Options) (*Clock, error) {
	if !opts.Policy.Valid() {
		return nil, fmt.Errorf("%w %d: %w", ErrBadPolicy, uint8(opts.Policy), errno.EINVAL)
	}
	res := opts.Resolution
	switch {
	case opts.Policy == Real:
		res = time.Nanosecond
	case res == 0:
		res = MinResolution
	case res < MinResolution:
		return nil, fmt.Errorf("%w: %v: %w", ErrBadResolution, res, errno.EINVAL)
	}
	now := time.Now()
	return &Clock{
		policy:   opts.Policy,
		res:      res,
		boot:     now,
		bootWall: now.Round(0).Truncate(res),
		seed:     rand.Uint64(),
	}, nil
}

// Policy returns the clock's policy.
func (c *Clock) Policy() Policy { return c.policy }

// Resolution returns the step of the clock's readings: what clock_res_get
// reports for the realtime and monotonic clocks.
func (c *Clock) Resolution() time.Duration { return c.res }

// Boot returns the VM's boot time on its own wall clock.
func (c *Clock) Boot() time.Time { return c.bootWall }

// Elapsed returns how long the VM has run, under the policy: /proc/uptime
// and the origin of every other reading.
//
// A Coarse clock steps once per resolution, but not exactly on the
// multiples of it: each step's edge is moved later by a pseudo-random
// part of the resolution (fixed per VM and step). Without that a guest
// could spin until the clock ticks and then count loop iterations up to
// the next tick, interpolating a finer timer from a known step width; with
// it the width of every step is unknown (0 to 2 resolutions). Readings
// stay multiples of the resolution, monotonic, and within two steps of
// real time.
func (c *Clock) Elapsed() time.Duration {
	switch c.policy {
	case Real:
		return time.Since(c.boot)
	case Frozen:
		return 0
	}
	return c.coarse(time.Since(c.boot))
}

// coarse maps real elapsed time e to the Coarse clock's step.
func (c *Clock) coarse(e time.Duration) time.Duration {
	k := e / c.res
	if k > 0 && e-k*c.res < c.edge(k) {
		k--
	}
	return k * c.res
}

// edge is how far past k*res step k begins, in [0, res).
func (c *Clock) edge(k time.Duration) time.Duration {
	return time.Duration(mix(c.seed^uint64(k)) % uint64(c.res))
}

// mix is SplitMix64's finaliser: a cheap, well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Monotonic returns the guests' monotonic clock (WASI's monotonic clock,
// node's process.hrtime): Elapsed plus one step, so that no guest ever
// reads zero (Go's runtime refuses a zero nanotime).
func (c *Clock) Monotonic() time.Duration { return c.Elapsed() + c.res }

// Now returns the guests' wall clock: the host's for a Real clock, else
// the boot time plus Elapsed.
func (c *Clock) Now() time.Time {
	if c.policy == Real {
		return time.Now().Round(0)
	}
	return c.bootWall.Add(c.Elapsed())
}

// Duration shows a duration measured elsewhere (a process's CPU time, its
// age) under the policy: truncated to the resolution, zero when frozen.
func (c *Clock) Duration(d time.Duration) time.Duration {
	switch c.policy {
	case Real:
		return d
	case Frozen:
		return 0
	}
	return d.Truncate(c.res)
}

// Stamp shows a time the clock did not make (a host file's times, set by
// the host's kernel) under the policy: truncated to the resolution and
// never later than Now, so a guest cannot time itself by writing a host
// file and reading its modification time back.
func (c *Clock) Stamp(t time.Time) time.Time {
	if c.policy == Real {
		return t
	}
	t = t.Round(0).Truncate(c.res)
	if now := c.Now(); t.After(now) {
		return now
	}
	return t
}
