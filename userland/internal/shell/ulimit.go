package shell

import (
	"fmt"
	"strconv"
	"strings"
)

// ulimitResource is one resource ulimit reports, in bash's -a order.
type ulimitResource struct {
	opt   byte
	label string
}

var ulimitResources = []ulimitResource{
	{'c', "core file size              (blocks, -c)"},
	{'d', "data seg size               (kbytes, -d)"},
	{'f', "file size                   (blocks, -f)"},
	{'m', "max memory size             (kbytes, -m)"},
	{'n', "open files                          (-n)"},
	{'s', "stack size                  (kbytes, -s)"},
	{'t', "cpu time                   (seconds, -t)"},
	{'u', "max user processes                  (-u)"},
	{'v', "virtual memory              (kbytes, -v)"},
}

// ulimitB is bash's ulimit for a process with no per-process rlimits: the
// VM's limits (memory, CPU, files, processes) bound it as a whole and the
// shell cannot see or change them, so every resource reads "unlimited".
// Only the core file size may be set, to any value: the VM never writes a
// core file, so every such limit holds (scripts run `ulimit -c 0` before
// a program expected to abort, as Node's tests do).
func (s *Shell) ulimitB(args []string) int {
	var opts []byte
	all := false
	args = args[1:]
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		for i := 1; i < len(args[0]); i++ {
			c := args[0][i]
			switch {
			case c == 'S' || c == 'H':
				// Soft and hard limits are the same here.
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
		for _, r := range ulimitResources {
			s.out(1, fmt.Sprintf("%s %s\n", r.label, s.ulimitValue(r.opt)))
		}
		return 0
	}
	if len(opts) == 0 {
		opts = []byte{'f'}
	}
	if len(args) == 0 {
		for _, o := range opts {
			if len(opts) > 1 {
				for _, r := range ulimitResources {
					if r.opt == o {
						s.out(1, r.label+" ")
					}
				}
			}
			s.out(1, s.ulimitValue(o)+"\n")
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

// ulimitValue is what ulimit prints for the resource opt.
func (s *Shell) ulimitValue(opt byte) string {
	if opt == 'c' && s.coreLimit != "" {
		return s.coreLimit
	}
	return "unlimited"
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
