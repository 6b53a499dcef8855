package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
)

// cmdBlame: git blame [-s] [-l] [-e] [-p | --line-porcelain]
// [-L <start>,<end>] [<rev>] [--] <file>, in git's formats, on go-git's
// blame.
func cmdBlame(e *env, args []string) error {
	suppress, longHash, email, porcelain, linePorcelain := false, false, false, false, false
	lineRange := ""
	var rest []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			dashdash = true
			rest = append(rest, "--")
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "-s":
			suppress = true
		case a == "-p" || a == "--porcelain":
			porcelain = true
		case a == "--line-porcelain":
			porcelain, linePorcelain = true, true
		case a == "-l":
			longHash = true
		case a == "-e" || a == "--show-email":
			email = true
		case a == "-L" && i+1 < len(args):
			lineRange = args[i+1]
			i++
		case strings.HasPrefix(a, "-L") && len(a) > 2:
			lineRange = a[2:]
		case strings.HasPrefix(a, "-"):
			return optionError("blame", a)
		default:
			rest = append(rest, a)
		}
	}
	rev, file, explicitRev := "HEAD", "", false
	if dashdash {
		i := 0
		for rest[i] != "--" {
			i++
		}
		if i > 1 || len(rest)-i-1 != 1 {
			return usagef("%s", strings.TrimSuffix(usageTexts["blame"], "\n"))
		}
		if i == 1 {
			rev, explicitRev = rest[0], true
		}
		file = rest[i+1]
	} else {
		switch len(rest) {
		case 1:
			file = rest[0]
		case 2:
			rev, file, explicitRev = rest[0], rest[1], true
		default:
			return usagef("%s", strings.TrimSuffix(usageTexts["blame"], "\n"))
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	c, err := rp.resolveCommit(rev)
	if err != nil {
		return fatalf("bad revision '%s'", rev)
	}
	rel, err := rp.rel(file)
	if err != nil {
		return fatalf("'%s' is outside repository at '%s'", file, rp.root)
	}
	if _, err := c.File(rel); err != nil {
		return fatalf("no such path '%s' in %s", rel, rev)
	}
	res, err := git.Blame(c, rel)
	if err != nil {
		return err
	}
	if rev == "HEAD" && !explicitRev {
		if err := blameWorktree(rp, rel, res); err != nil {
			return err
		}
	}
	start, end := 1, len(res.Lines)
	if lineRange != "" {
		s, t, ok := strings.Cut(lineRange, ",")
		a, err1 := strconv.Atoi(s)
		b, err2 := strconv.Atoi(t)
		if !ok || err1 != nil || err2 != nil || a < 1 || b < a {
			return fatalf("invalid -L range: '%s'", lineRange)
		}
		if a > len(res.Lines) {
			return fatalf("file %s has only %d lines", rel, len(res.Lines))
		}
		start, end = a, min(b, len(res.Lines))
	}
	if porcelain {
		return writePorcelain(e, rp, rel, res.Lines, start, end, linePorcelain, c.Hash)
	}
	lines := res.Lines[start-1 : end]
	nameWidth := 0
	boundary := map[string]bool{}
	for _, l := range lines {
		who := l.AuthorName
		if email {
			who = "<" + l.Author + ">"
		}
		nameWidth = max(nameWidth, utf8.RuneCountInString(who))
		if _, seen := boundary[l.Hash.String()]; !seen {
			lc, err := rp.r.CommitObject(l.Hash)
			boundary[l.Hash.String()] = err == nil && len(lc.ParentHashes) == 0
		}
	}
	numWidth := len(strconv.Itoa(end))
	var b strings.Builder
	for i, l := range lines {
		h := l.Hash.String()
		switch {
		case longHash && boundary[h]:
			h = "^" + h[:39]
		case longHash:
		case boundary[h]:
			h = "^" + h[:7]
		default:
			h = h[:8]
		}
		text := strings.TrimSuffix(l.Text, "\n")
		if suppress {
			fmt.Fprintf(&b, "%s %*d) %s\n", h, numWidth, start+i, text)
			continue
		}
		who := l.AuthorName
		if email {
			who = "<" + l.Author + ">"
		}
		pad := nameWidth - utf8.RuneCountInString(who)
		fmt.Fprintf(&b, "%s (%s%s %s %*d) %s\n", h, who, strings.Repeat(" ", pad), l.Date.Format("2006-01-02 15:04:05 -0700"), numWidth, start+i, text)
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

// blameWorktree blames the worktree's version of the file, as git
// blame without a revision does: lines not in HEAD's version are "Not
// Committed Yet", by the zero hash, now.
func blameWorktree(rp *repo, rel string, res *git.BlameResult) error {
	wt, ok, err := worktreeFile(rp, rel)
	if err != nil || !ok {
		return err
	}
	data, err := wt.load()
	if err != nil {
		return err
	}
	var old strings.Builder
	for _, l := range res.Lines {
		old.WriteString(l.Text + "\n")
	}
	if old.String() == string(data) {
		return nil
	}
	now := time.Now()
	var lines []*git.Line
	i := 0
	for _, o := range lineOps(old.String(), string(data)) {
		switch o.kind {
		case ' ':
			if i < len(res.Lines) {
				lines = append(lines, res.Lines[i])
			}
			i++
		case '-':
			i++
		case '+':
			lines = append(lines, &git.Line{Author: "not.committed.yet", AuthorName: "Not Committed Yet", Text: strings.TrimSuffix(o.line, "\n"), Date: now})
		}
	}
	res.Lines = lines
	return nil
}

// origLines finds, for each line, its number in the version of the file
// of the commit it comes from: the commit's own lines (by go-git's blame
// at that commit) matched in order.
func origLines(rp *repo, rel string, lines []*git.Line) ([]int, error) {
	out := make([]int, len(lines))
	byCommit := map[plumbing.Hash][]int{}
	for i, l := range lines {
		if l.Hash.IsZero() {
			out[i] = i + 1
			continue
		}
		byCommit[l.Hash] = append(byCommit[l.Hash], i)
	}
	for h, idx := range byCommit {
		c, err := rp.r.CommitObject(h)
		if err != nil {
			return nil, err
		}
		own, err := git.Blame(c, rel)
		if err != nil {
			return nil, err
		}
		j := 0
		for _, i := range idx {
			for j < len(own.Lines) && !(own.Lines[j].Hash == h && own.Lines[j].Text == lines[i].Text) {
				j++
			}
			if j == len(own.Lines) {
				out[i] = i + 1
				continue
			}
			out[i] = j + 1
			j++
		}
	}
	return out, nil
}

// writePorcelain is blame --porcelain: a header per group of lines from
// the same commit, the commit's details the first time it appears (every
// line with --line-porcelain), and each line after a tab.
func writePorcelain(e *env, rp *repo, rel string, all []*git.Line, start, end int, everyLine bool, head plumbing.Hash) error {
	orig, err := origLines(rp, rel, all)
	if err != nil {
		return err
	}
	var b strings.Builder
	shown := map[plumbing.Hash]bool{}
	details := func(l *git.Line) error {
		if l.Hash.IsZero() {
			fmt.Fprintf(&b, "author Not Committed Yet\nauthor-mail <not.committed.yet>\nauthor-time %d\nauthor-tz %s\n"+
				"committer Not Committed Yet\ncommitter-mail <not.committed.yet>\ncommitter-time %d\ncommitter-tz %s\n"+
				"summary Version of %s from %s\nprevious %s %s\n",
				l.Date.Unix(), l.Date.Format("-0700"), l.Date.Unix(), l.Date.Format("-0700"), rel, rel, head, rel)
		} else {
			c, err := rp.r.CommitObject(l.Hash)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "author %s\nauthor-mail <%s>\nauthor-time %d\nauthor-tz %s\ncommitter %s\ncommitter-mail <%s>\ncommitter-time %d\ncommitter-tz %s\nsummary %s\n",
				c.Author.Name, c.Author.Email, c.Author.When.Unix(), c.Author.When.Format("-0700"),
				c.Committer.Name, c.Committer.Email, c.Committer.When.Unix(), c.Committer.When.Format("-0700"), subjectOf(c.Message))
			if len(c.ParentHashes) == 0 {
				b.WriteString("boundary\n")
			} else if p, err := rp.r.CommitObject(c.ParentHashes[0]); err == nil {
				if _, err := p.File(rel); err == nil {
					fmt.Fprintf(&b, "previous %s %s\n", p.Hash, rel)
				}
			}
		}
		fmt.Fprintf(&b, "filename %s\n", rel)
		return nil
	}
	for i := start - 1; i < end; {
		// A group: the following lines from the same commit whose
		// original lines follow each other.
		n := 1
		for i+n < end && all[i+n].Hash == all[i].Hash && orig[i+n] == orig[i]+n {
			n++
		}
		for k := 0; k < n; k++ {
			l := all[i+k]
			if k == 0 {
				fmt.Fprintf(&b, "%s %d %d %d\n", l.Hash, orig[i], i+1, n)
			} else {
				fmt.Fprintf(&b, "%s %d %d\n", l.Hash, orig[i+k], i+k+1)
			}
			if everyLine || !shown[l.Hash] {
				shown[l.Hash] = true
				if err := details(l); err != nil {
					return err
				}
			}
			fmt.Fprintf(&b, "\t%s\n", l.Text)
		}
		i += n
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}
