package shell

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ulimitResource is one resource ulimit reports, in bash's -a order: its
// label, the row of /proc/self/limits it reads, and the unit bash counts
// it in (bytes per unit; 1 for counts and seconds).
type ulimitResource struct {
	opt   byte
	label string
	row   string
	unit  uint64
}

var ulimitResources = []ulimitResource{
	{'c', "core file size              (blocks, -c)", "Max core file size", 1024},
	{'d', "data seg size               (kbytes, -d)", "Max data size", 1024},
	{'f', "file size                   (blocks, -f)", "Max file size", 1024},
	{'m', "max memory size             (kbytes, -m)", "Max resident set", 1024},
	{'n', "open files                          (-n)", "Max open files", 1},
	{'s', "stack size                  (kbytes, -s)", "Max stack size", 1024},
	{'t', "cpu time                   (seconds, -t)", "Max cpu time", 1},
	{'u', "max user processes                  (-u)", "Max processes", 1},
	{'v', "virtual memory              (kbytes, -v)", "Max address space", 1024},
}

// ulimitB is bash's ulimit over the VM's per-process limits, which the
// kernel publishes in /proc/self/limits (CPU time, memory, processes,
// open files; the rest are unlimited). A guest cannot change them, so
// setting one fails as an unprivileged raise does — except the core file
// size, which may be set to any value: the VM never writes a core file,
// so every such limit holds (scripts run `ulimit -c 0` before a program
// expected to abort, as Node's tests do).
func (s *Shell) ulimitB(args []string) int {
	var opts []byte
	all, hard := false, false
	args = args[1:]
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for i := 1; i < len(args[0]); i++ {
			c := args[0][i]
			switch {
			case c == 'S':
				hard = false
			case c == 'H':
				hard = true
			case c == 'a':
				all = true
			case strings.IndexByte("cdfmnstuv", c) >= 0:
				opts = append(opts, c)
			default:
				s.berr("ulimit", "-%c: invalid option", c)
				s.out(2, "ulimit: usage: ulimit [-SHacdfmnstuv] [limit]\n")
				return 2
			}
		}
		args = args[1:]
	}
	if all {
		rows := readLimits()
		for _, r := range ulimitResources {
			s.out(1, fmt.Sprintf("%s %s\n", r.label, s.ulimitValue(rows, r, hard)))
		}
		return 0
	}
	if len(opts) == 0 {
		opts = []byte{'f'}
	}
	if len(args) == 0 {
		rows := readLimits()
		for _, o := range opts {
			for _, r := range ulimitResources {
				if r.opt != o {
					continue
				}
				if len(opts) > 1 {
					s.out(1, r.label+" ")
				}
				s.out(1, s.ulimitValue(rows, r, hard)+"\n")
			}
		}
		return 0
	}
	v := args[0]
	if v != "unlimited" && v != "hard" && v != "soft" {
		if _, err := strconv.ParseUint(v, 10, 63); err != nil {
			s.berr("ulimit", "%s: invalid number", v)
			return 1
		}
	}
	status := 0
	for _, o := range opts {
		if o != 'c' {
			s.berr("ulimit", "%s: cannot modify limit: Operation not permitted", ulimitName(o))
			status = 1
			continue
		}
		if v != "hard" && v != "soft" {
			s.coreLimit = v
		}
	}
	return status
}

// ulimitValue is what ulimit prints for r: its soft (or hard) limit in
// bash's unit, from the rows of /proc/self/limits.
func (s *Shell) ulimitValue(rows map[string][2]string, r ulimitResource, hard bool) string {
	if r.opt == 'c' && s.coreLimit != "" {
		return s.coreLimit
	}
	v, ok := rows[r.row]
	if !ok {
		return "unlimited"
	}
	col := v[0]
	if hard {
		col = v[1]
	}
	n, err := strconv.ParseUint(col, 10, 64)
	if err != nil {
		return "unlimited"
	}
	return strconv.FormatUint(n/r.unit, 10)
}

// readLimits reads /proc/self/limits into row name -> {soft, hard}. With
// no /proc (a VM without one) every limit reads unlimited, which is what
// the kernel enforces per process then too.
func readLimits() map[string][2]string {
	rows := map[string][2]string{}
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return rows
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) == 0 {
		return rows
	}
	// The name column ends where the header's "Soft Limit" begins.
	at := strings.Index(lines[0], "Soft Limit")
	if at <= 0 {
		return rows
	}
	for _, line := range lines[1:] {
		if len(line) <= at {
			continue
		}
		f := strings.Fields(line[at:])
		if len(f) >= 2 {
			rows[strings.TrimSpace(line[:at])] = [2]string{f[0], f[1]}
		}
	}
	return rows
}

// ulimitName is bash's name of a resource in errors: the label before
// its unit.
func ulimitName(opt byte) string {
	for _, r := range ulimitResources {
		if r.opt == opt {
			name, _, _ := strings.Cut(r.label, "  ")
			return name
		}
	}
	return string(opt)
}
