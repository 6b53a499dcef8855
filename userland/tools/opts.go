package main

import (
	"fmt"
	"strings"
)

// opt is one parsed option: its name (a letter or a long name) and its
// argument, if it takes one.
type opt struct {
	name, arg string
}

// getopt parses args GNU style: short options from spec ("c:" takes an
// argument), long options from longs ("dry-run", "input=" takes one),
// options and operands mixed, "--" ending options. A long option may be
// abbreviated to any unambiguous prefix.
func getopt(args []string, spec string, longs []string) (opts []opt, operands []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			long, takes, err := matchLong(name, longs)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case takes && !hasVal:
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("option '--%s' requires an argument", long)
				}
				i++
				val = args[i]
			case !takes && hasVal:
				return nil, nil, fmt.Errorf("option '--%s' doesn't allow an argument", long)
			}
			opts = append(opts, opt{long, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				k := strings.IndexByte(spec, c)
				if k < 0 || c == ':' {
					return nil, nil, fmt.Errorf("invalid option -- '%c'", c)
				}
				if k+1 < len(spec) && spec[k+1] == ':' {
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return nil, nil, fmt.Errorf("option requires an argument -- '%c'", c)
						}
						i++
						val = args[i]
					}
					opts = append(opts, opt{string(c), val})
					break
				}
				opts = append(opts, opt{string(c), ""})
			}
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands, nil
}

func matchLong(name string, longs []string) (string, bool, error) {
	var found []string
	for _, l := range longs {
		base, takes := strings.CutSuffix(l, "=")
		if base == name {
			return base, takes, nil
		}
		if strings.HasPrefix(base, name) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return "", false, fmt.Errorf("unrecognized option '--%s'", name)
	case 1:
		base, takes := strings.CutSuffix(found[0], "=")
		return base, takes, nil
	}
	return "", false, fmt.Errorf("option '--%s' is ambiguous", name)
}
