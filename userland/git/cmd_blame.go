package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	git "github.com/go-git/go-git/v6"
)

// cmdBlame: git blame [-s] [-l] [-e] [-L <start>,<end>] [<rev>] [--] <file>,
// in git's default format, on go-git's blame. --porcelain is not
// provided: go-git does not report the line numbers in the commits the
// lines come from.
func cmdBlame(e *env, args []string) error {
	suppress, longHash, email := false, false, false
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
