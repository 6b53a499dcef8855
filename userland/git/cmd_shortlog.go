package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
)

// cmdShortlog: git shortlog [-n] [-s] [-e] [-c] [--format=<f>]
// [<revision-range>] [[--] <path>...]: commits grouped by author (or
// committer), oldest first in each group. With no revision and standard
// input not a terminal it summarises "git log" output read from stdin,
// as git does.
func cmdShortlog(e *env, args []string) error {
	args = expandShort(args, "")
	numbered, summary, email, committer := false, false, false, false
	format := ""
	lo := &logOpts{format: "medium", max: -1}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case a == "-n" || a == "--numbered":
			numbered = true
		case a == "-s" || a == "--summary":
			summary = true
		case a == "-e" || a == "--email":
			email = true
		case a == "-c" || a == "--committer":
			committer = true
		case strings.HasPrefix(a, "--format="), strings.HasPrefix(a, "--pretty="):
			format = a[strings.IndexByte(a, '=')+1:]
			format = strings.TrimPrefix(strings.TrimPrefix(format, "tformat:"), "format:")
		case strings.HasPrefix(a, "-") && a != "-":
			n, err := lo.parseOption(a, args[i+1:])
			if err != nil {
				return err
			}
			if n < 0 {
				return optionError("shortlog", a)
			}
			i += n
		default:
			rest = append(rest, a)
		}
	}
	groups := map[string][]string{}
	rp, repoErr := openRepo()
	var revs, paths []string
	if repoErr == nil {
		var err error
		if revs, paths, err = splitRevsPaths(rp, rest); err != nil {
			return err
		}
	}
	if len(revs) == 0 && (repoErr != nil || !stdinIsTerminal()) {
		// No revision: the log to summarise comes on stdin.
		if err := shortlogFromLog(os.Stdin, groups, email); err != nil {
			return err
		}
	} else {
		if err := lo.compile(); err != nil {
			return err
		}
		if len(revs) == 0 {
			revs = []string{"HEAD"}
		}
		var starts, excludes []plumbing.Hash
		for _, r := range revs {
			rr := parseRange(r)
			to, err := resolveCommitRevision(rp, rr.to)
			if err != nil {
				return err
			}
			if rr.negative {
				excludes = append(excludes, to.Hash)
				continue
			}
			starts = append(starts, to.Hash)
			if rr.dots == 2 {
				from, err := resolveCommitRevision(rp, rr.from)
				if err != nil {
					return err
				}
				excludes = append(excludes, from.Hash)
			}
		}
		specs, err := pathspecs(rp, paths)
		if err != nil {
			return err
		}
		commits, _, err := selectCommits(rp, lo, starts, excludes, specs)
		if err != nil {
			return err
		}
		for _, c := range commits {
			who := c.Author
			if committer {
				who = c.Committer
			}
			key := who.Name
			if email {
				key += " <" + who.Email + ">"
			}
			line := shortlogSubject(c.Message)
			if format != "" {
				line = expandFormat(format, c, nil)
			}
			groups[key] = append(groups[key], line)
		}
	}
	names := slices.Sorted(mapKeys(groups))
	if numbered {
		slices.SortStableFunc(names, func(a, b string) int { return len(groups[b]) - len(groups[a]) })
	}
	w := bufio.NewWriter(e.stdout)
	for _, n := range names {
		subjects := groups[n]
		if summary {
			fmt.Fprintf(w, "%6d\t%s\n", len(subjects), n)
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", n, len(subjects))
		for i := len(subjects) - 1; i >= 0; i-- {
			fmt.Fprintf(w, "      %s\n", subjects[i])
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

// shortlogSubject is a commit's subject as shortlog lists it: a leading
// "[PATCH...]" dropped.
func shortlogSubject(msg string) string {
	s := subjectOf(msg)
	if strings.HasPrefix(s, "[PATCH") {
		if i := strings.IndexByte(s, ']'); i >= 0 {
			s = strings.TrimLeft(s[i+1:], " \t")
		}
	}
	return s
}

// maxShortlogInput bounds the log text shortlog reads from stdin.
const maxShortlogInput = 64 << 20

// shortlogFromLog reads "git log" output: each "Author:" line starts a
// commit whose first indented line is its subject.
func shortlogFromLog(r io.Reader, groups map[string][]string, email bool) error {
	sc := bufio.NewScanner(io.LimitReader(r, maxShortlogInput))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	author, want := "", false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "Author: "):
			author = strings.TrimSpace(strings.TrimPrefix(l, "Author: "))
			if !email {
				if i := strings.Index(author, " <"); i >= 0 {
					author = author[:i]
				}
			}
			want = true
		case want && strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "":
			groups[author] = append(groups[author], shortlogSubject(strings.TrimSpace(l)))
			want = false
		}
	}
	return sc.Err()
}
