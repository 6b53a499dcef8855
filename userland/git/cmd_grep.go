package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// cmdGrep: git grep [-n] [-i] [-l] [-c] [-w] [-v] [-E|-F|-G] [-h|-H]
// [-e <pattern>]... [<rev>...] [--] [<pathspec>...]: the tracked files
// of the worktree (or of each <rev>'s tree). Patterns are POSIX basic
// regular expressions unless -E or -F, as in git.
func cmdGrep(e *env, args []string) error {
	args = expandShort(args, "e")
	lineNo, ignoreCase, filesOnly, count, word, invert, noName := false, false, false, false, false, false, false
	quiet, cached, onlyMatching, filesWithout := false, false, false, false
	syntax := "G"
	var patterns, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case a == "-n" || a == "--line-number":
			lineNo = true
		case a == "-i" || a == "--ignore-case":
			ignoreCase = true
		case a == "-l" || a == "--files-with-matches" || a == "--name-only":
			filesOnly = true
		case a == "-c" || a == "--count":
			count = true
		case a == "-w" || a == "--word-regexp":
			word = true
		case a == "-v" || a == "--invert-match":
			invert = true
		case a == "-h":
			noName = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--cached":
			cached = true
		case a == "-o" || a == "--only-matching":
			onlyMatching = true
		case a == "-L" || a == "--files-without-match":
			filesWithout = true
		case a == "-H":
			noName = false
		case a == "-E" || a == "--extended-regexp":
			syntax = "E"
		case a == "-F" || a == "--fixed-strings":
			syntax = "F"
		case a == "-G" || a == "--basic-regexp":
			syntax = "G"
		case a == "-e" && i+1 < len(args):
			patterns = append(patterns, args[i+1])
			i++
		case a == "-e":
			return usagef("error: switch `e' requires a value")
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("grep", a)
		default:
			rest = append(rest, a)
		}
	}
	if len(patterns) == 0 {
		if len(rest) == 0 || rest[0] == "--" {
			return fatalf("no pattern given")
		}
		patterns, rest = rest[:1], rest[1:]
	}
	var res []*regexp.Regexp
	for _, p := range patterns {
		src := p
		switch syntax {
		case "F":
			src = regexp.QuoteMeta(p)
		case "G":
			src = breToRE2(p)
		}
		if word {
			src = `\b(?:` + src + `)\b`
		}
		if ignoreCase {
			src = "(?i)" + src
		}
		re, err := regexp.Compile(src)
		if err != nil {
			return fatalf("command line, '%s': %v", p, err)
		}
		res = append(res, re)
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	revs, paths, err := splitRevsPaths(rp, rest)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		// Without pathspecs git grep searches the current directory.
		paths = []string{"."}
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	type source struct {
		prefix string
		files  snapshot
	}
	var sources []source
	if len(revs) == 0 {
		idx, err := indexSnapshot(rp)
		if err != nil {
			return err
		}
		files := idx
		if !cached {
			if files, err = worktreeSnapshot(rp, idx); err != nil {
				return err
			}
		}
		sources = append(sources, source{files: files})
	} else if cached {
		return fatalf("both --cached and trees are given")
	}
	for _, r := range revs {
		c, err := rp.resolveCommit(r)
		if err != nil {
			return err
		}
		t, err := treeSnapshot(rp, c)
		if err != nil {
			return err
		}
		sources = append(sources, source{prefix: r + ":", files: t})
	}
	matched := false
	var out bytes.Buffer
	m := newSpecMatcher(specs)
	for _, s := range sources {
		for _, p := range slices.Sorted(mapKeys(s.files)) {
			if !m.match(p) {
				continue
			}
			data, err := s.files[p].load()
			if err != nil {
				return err
			}
			name := quotePath(rp.display(p))
			if s.prefix != "" {
				name = s.prefix + quotePath(p)
			}
			n := 0
			binary := isBinary(data)
			for i, line := range strings.SplitAfter(string(data), "\n") {
				if line == "" {
					continue
				}
				text := strings.TrimSuffix(line, "\n")
				hit := slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(text) })
				if hit == invert {
					continue
				}
				n++
				if filesOnly || count || quiet || filesWithout {
					continue
				}
				if binary {
					fmt.Fprintf(&out, "Binary file %s matches\n", name)
					break
				}
				if onlyMatching && !invert {
					for _, m := range matchesIn(res, text) {
						prefix := name + ":"
						if noName {
							prefix = ""
						}
						if lineNo {
							prefix += strconv.Itoa(i+1) + ":"
						}
						fmt.Fprintf(&out, "%s%s\n", prefix, m)
					}
					continue
				}
				switch {
				case noName && lineNo:
					fmt.Fprintf(&out, "%d:%s\n", i+1, text)
				case noName:
					fmt.Fprintf(&out, "%s\n", text)
				case lineNo:
					fmt.Fprintf(&out, "%s:%d:%s\n", name, i+1, text)
				default:
					fmt.Fprintf(&out, "%s:%s\n", name, text)
				}
			}
			if filesWithout {
				if n == 0 {
					matched = true
					fmt.Fprintln(&out, name)
				}
				continue
			}
			if n == 0 {
				continue
			}
			matched = true
			switch {
			case quiet:
			case filesOnly:
				fmt.Fprintln(&out, name)
			case count:
				fmt.Fprintf(&out, "%s:%s\n", name, strconv.Itoa(n))
			}
		}
	}
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if !matched {
		return &exitError{code: 1}
	}
	return nil
}

// matchesIn lists the non-empty matches of any pattern in a line, left
// to right, as -o prints them.
func matchesIn(res []*regexp.Regexp, text string) []string {
	var out []string
	for pos := 0; pos <= len(text); {
		best, bestEnd := -1, -1
		for _, re := range res {
			if loc := re.FindStringIndex(text[pos:]); loc != nil && loc[1] > loc[0] {
				if best < 0 || loc[0] < best || loc[0] == best && loc[1] > bestEnd {
					best, bestEnd = loc[0], loc[1]
				}
			}
		}
		if best < 0 {
			break
		}
		out = append(out, text[pos+best:pos+bestEnd])
		pos += bestEnd
	}
	return out
}

// breToRE2 translates a POSIX basic regular expression (with GNU's \+,
// \?, \| and \< \>) to Go's syntax: in a BRE, ( ) { } + ? | are literal
// and their backslashed forms are the operators.
func breToRE2(p string) string {
	var b strings.Builder
	atStart := true
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			switch n := p[i]; n {
			case '(', ')', '{', '}', '|', '+', '?':
				b.WriteByte(n)
				atStart = n == '(' || n == '|'
				continue
			case '<', '>':
				b.WriteString(`\b`)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case c == '[':
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				if p[j] == '[' && j+1 < len(p) && p[j+1] == ':' {
					if k := strings.Index(p[j+2:], ":]"); k >= 0 {
						j += k + 4
						continue
					}
				}
				j++
			}
			if j >= len(p) {
				b.WriteString(regexp.QuoteMeta(p[i:]))
				return b.String()
			}
			class := p[i+1 : j]
			class = strings.ReplaceAll(class, `\`, `\\`)
			if strings.HasPrefix(class, "^]") {
				class = `^\]` + class[2:]
			} else if strings.HasPrefix(class, "]") {
				class = `\]` + class[1:]
			}
			b.WriteString("[" + class + "]")
			i = j
		case c == '*' && atStart:
			b.WriteString(`\*`)
		case c == '^' && atStart:
			b.WriteByte('^')
			continue
		case strings.IndexByte("(){}+?|", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
		atStart = false
	}
	return b.String()
}
