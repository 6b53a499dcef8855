package procfs

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// FuzzParseNum checks that a name parses as a number exactly when it is
// the canonical decimal form of a pid_t-sized value.
func FuzzParseNum(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseNum(s)
		v, err := strconv.Atoi(s)
		canonical := err == nil && v >= 0 && v <= 1<<31-1 && strconv.Itoa(v) == s
		if ok != canonical || (ok && n != v) {
			t.Fatalf("parseNum(%q) = %d, %v; Atoi gives %d, %v", s, n, ok, v, err)
		}
	})
}

// FuzzLookup feeds arbitrary names to every directory: a lookup never
// panics, fails only with ENOENT, and succeeds exactly for the names the
// directory lists.
func FuzzLookup(f *testing.F) {
	fs := New(newFake())
	ctx := as(1)
	dirs := []string{"", "sys", "sys/kernel", "42", "42/fd"}
	listed := map[string][]string{}
	for _, d := range dirs {
		ino, err := lookup(ctx, fs, d)
		if err != nil {
			f.Fatal(err)
		}
		ents, err := ino.ReadDir(ctx, 0, 1000)
		if err != nil {
			f.Fatal(err)
		}
		listed[d] = names(ents)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, d := range dirs {
			dir, _ := lookup(ctx, fs, d)
			ino, err := dir.Lookup(ctx, name)
			want := slices.Contains(listed[d], name)
			if err != nil {
				if !errors.Is(err, errno.ENOENT) {
					t.Fatalf("%s: lookup %q: %v", d, name, err)
				}
				if want {
					t.Fatalf("%s: listed %q not found", d, name)
				}
				continue
			}
			if !want {
				t.Fatalf("%s: %q found but not listed", d, name)
			}
			if _, err := ino.Stat(ctx); err != nil {
				t.Fatalf("%s/%s: stat: %v", d, name, err)
			}
		}
	})
}

// unescapeName reverses escapeName.
func unescapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmangle reverses appendMangled: every backslash in its output starts
// a three-digit octal escape.
func unmangle(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzRender renders the per-process and mount files from hostile values
// and checks that each keeps its Linux shape: status is "Key:\tvalue"
// lines with the name escaped onto one line, stat has 52 fields after the
// command name, and a mount entry is one line of six fields that decode
// back to the input.
func FuzzRender(f *testing.F) {
	baseline := len(statusFields(f, string(renderStatus(Status{}, nil))))
	f.Fuzz(func(t *testing.T, name string, state byte, pid int, uid uint32, vm uint64, start int64,
		source, target, fstype, options string, fd int) {
		s := Status{Name: name, State: state, PID: pid, PPID: pid / 2, PGID: -pid, UID: uid,
			VmSize: vm, VmRSS: vm / 3, StartTime: time.Duration(start), UserTime: time.Duration(-start)}
		fields := statusFields(t, string(renderStatus(s, []int{fd})))
		if got := unescapeName(fields["Name"]); got != comm(s) {
			t.Fatalf("status Name %q decodes to %q, want %q", fields["Name"], got, comm(s))
		}
		if len(fields) != baseline {
			t.Fatalf("status has %d fields", len(fields))
		}
		sf := statFields(t, string(renderStat(s)))
		if sf[1] != comm(s) || sf[0] != strconv.Itoa(pid) {
			t.Fatalf("stat names %q, %q", sf[0], sf[1])
		}
		if st := renderStatm(s); strings.Count(string(st), " ") != 6 || strings.Count(string(st), "\n") != 1 {
			t.Fatalf("statm %q", st)
		}
		m := MountInfo{Source: source, Target: target, FSType: fstype, Options: options}
		line := string(renderMounts([]MountInfo{m}))
		if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, " 0 0\n") {
			t.Fatalf("mount line %q", line)
		}
		parts := strings.Split(strings.TrimSuffix(line, "\n"), " ")
		if len(parts) != 6 {
			t.Fatalf("mount line %q has %d fields", line, len(parts))
		}
		for i, want := range []string{source, target, fstype, options} {
			if want == "" {
				continue
			}
			if got := unmangle(parts[i]); got != want {
				t.Fatalf("mount field %d = %q decodes to %q, want %q", i, parts[i], got, want)
			}
		}
	})
}

// FuzzStringsHandle reads NUL-joined strings at arbitrary offsets after
// an arbitrary earlier read, which positions the cursor cache.
func FuzzStringsHandle(f *testing.F) {
	f.Fuzz(func(t *testing.T, joined string, warm, off int64, size uint16) {
		strs := strings.Split(joined, ",")
		want := strings.Join(strs, "\x00") + "\x00"
		h := newStringsHandle(strs)
		ctx := context.Background()
		if warm >= 0 {
			_, _ = h.ReadAt(ctx, make([]byte, 3), warm)
		}
		buf := make([]byte, size)
		n, err := h.ReadAt(ctx, buf, off)
		if off < 0 {
			if !errors.Is(err, errno.EINVAL) {
				t.Fatalf("negative offset: %v", err)
			}
			return
		}
		exp := ""
		if off < int64(len(want)) {
			exp = want[off:min(off+int64(size), int64(len(want)))]
		}
		if err != nil || string(buf[:n]) != exp {
			t.Fatalf("ReadAt(%d, %d) after %d = %q, %v; want %q", size, off, warm, buf[:n], err, exp)
		}
	})
}
