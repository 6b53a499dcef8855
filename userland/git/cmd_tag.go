package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// cmdTag: git tag [-l [<pattern>...]] [-n[<num>]], git tag [-a] [-f]
// [-m <msg> | -F <file>] <name> [<commit>], git tag -d <name>...
func cmdTag(e *env, args []string) error {
	var msgs, rest []string
	file := ""
	list, del, annotate, force := false, false, false, false
	lines := -1
	var filter tagFilter
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case a == "-l" || a == "--list":
			list = true
		case a == "-d" || a == "--delete":
			del = true
		case a == "-a" || a == "--annotate":
			annotate = true
		case a == "-f" || a == "--force":
			force = true
		case (a == "-m" || a == "--message") && i+1 < len(args):
			msgs = append(msgs, args[i+1])
			i++
		case strings.HasPrefix(a, "--message="):
			msgs = append(msgs, strings.TrimPrefix(a, "--message="))
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			msgs = append(msgs, a[2:])
		case (a == "-F" || a == "--file") && i+1 < len(args):
			file = args[i+1]
			i++
		case strings.HasPrefix(a, "--sort="):
			filter.sort = strings.TrimPrefix(a, "--sort=")
			list = true
		case (a == "--contains" || a == "--points-at") && i+1 < len(args):
			if a == "--contains" {
				filter.contains = args[i+1]
			} else {
				filter.pointsAt = args[i+1]
			}
			list = true
			i++
		case strings.HasPrefix(a, "--contains=") || strings.HasPrefix(a, "--points-at="):
			k, v, _ := strings.Cut(a, "=")
			if k == "--contains" {
				filter.contains = v
			} else {
				filter.pointsAt = v
			}
			list = true
		case a == "-n":
			lines = 1
		case strings.HasPrefix(a, "-n") && isDigits(a[2:]):
			lines, _ = strconv.Atoi(a[2:])
		case strings.HasPrefix(a, "-") && a != "-":
			return optionError("tag", a)
		default:
			rest = append(rest, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	switch {
	case del:
		failed := false
		for _, name := range rest {
			ref, err := rp.r.Reference(plumbing.NewTagReferenceName(name), false)
			if err != nil {
				fmt.Fprintf(e.stderr, "error: tag '%s' not found.\n", name)
				failed = true
				continue
			}
			if err := rp.r.Storer.RemoveReference(ref.Name()); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Deleted tag '%s' (was %s)\n", name, short(ref.Hash()))
		}
		if failed {
			return &exitError{code: 1}
		}
		return nil
	case list || lines >= 0 && len(msgs) == 0 && file == "" || len(rest) == 0:
		return listTags(e, rp, rest, lines, filter)
	}
	name := rest[0]
	if len(rest) > 2 {
		return usagef("%s", strings.TrimSuffix(usageTexts["tag"], "\n"))
	}
	ref := plumbing.NewTagReferenceName(name)
	if !validRefName(name) {
		return fatalf("'%s' is not a valid tag name.", name)
	}
	target := "HEAD"
	if len(rest) == 2 {
		target = rest[1]
	}
	h, err := resolveRevision(rp, target)
	if err != nil {
		if len(rest) == 2 {
			return fatalf("Failed to resolve '%s' as a valid ref.", target)
		}
		return fatalf("Failed to resolve 'HEAD' as a valid ref.")
	}
	old, err := rp.r.Reference(ref, false)
	if err == nil && !force {
		return fatalf("tag '%s' already exists", name)
	}
	if annotate || len(msgs) > 0 || file != "" {
		var msg string
		switch {
		case file != "":
			text, err := readMessageFile(file)
			if err != nil {
				return err
			}
			msg = cleanMessage([]string{text})
		case len(msgs) > 0:
			msg = cleanMessage(msgs)
		default:
			if msg, err = editFile(e, rp, "TAG_EDITMSG", "\n#\n# Write a message for tag:\n#   "+name+"\n# Lines starting with '#' will be ignored.\n"); err != nil {
				return err
			}
			if msg == "" {
				return fatalf("no tag message?")
			}
		}
		tagger, err := identity(e, rp, "COMMITTER")
		if err != nil {
			return err
		}
		o, err := rp.r.Object(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		tag := &object.Tag{Name: name, Tagger: *tagger, Message: msg, TargetType: o.Type(), Target: h}
		enc := rp.r.Storer.NewEncodedObject()
		if err := tag.Encode(enc); err != nil {
			return err
		}
		if h, err = rp.r.Storer.SetEncodedObject(enc); err != nil {
			return err
		}
	}
	if err := rp.r.Storer.SetReference(plumbing.NewHashReference(ref, h)); err != nil {
		return err
	}
	if old != nil && force && old.Hash() != h {
		fmt.Fprintf(e.stdout, "Updated tag '%s' (was %s)\n", name, short(old.Hash()))
	}
	return nil
}

// validRefName is git's check-ref-format for one name.
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "-") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "..") ||
		strings.Contains(name, "@{") || strings.Contains(name, "//") || strings.Contains(name, "/.") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

// tagFilter is tag --sort, --contains and --points-at.
type tagFilter struct {
	sort, contains, pointsAt string
}

// listTags is git tag [-l [<pattern>...]] [-n<num>] [--sort=<key>]
// [--contains <commit>] [--points-at <object>].
func listTags(e *env, rp *repo, patterns []string, lines int, f tagFilter) error {
	refs, err := rp.r.Tags()
	if err != nil {
		return err
	}
	var tags []*plumbing.Reference
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		tags = append(tags, r)
		return nil
	})
	if err := sortTags(rp, tags, f.sort); err != nil {
		return err
	}
	var contains, pointsAt plumbing.Hash
	for _, x := range []struct {
		spec string
		h    *plumbing.Hash
	}{{f.contains, &contains}, {f.pointsAt, &pointsAt}} {
		if x.spec == "" {
			continue
		}
		h, err := resolve(rp, x.spec)
		if err != nil {
			return usagef("error: malformed object name %s", x.spec)
		}
		*x.h = h
	}
	for _, t := range tags {
		name := t.Name().Short()
		if !pointsAt.IsZero() {
			c, err := peelCommit(rp, t.Hash())
			if t.Hash() != pointsAt && (err != nil || c.Hash != pointsAt) {
				continue
			}
		}
		if !contains.IsZero() {
			c, err := peelCommit(rp, t.Hash())
			if err != nil {
				continue
			}
			in, err := reachable(rp, c.Hash)
			if err != nil {
				return err
			}
			if !in[contains] {
				continue
			}
		}
		if len(patterns) > 0 && !slices.ContainsFunc(patterns, func(p string) bool { return wildMatch(p, name) }) {
			continue
		}
		if lines < 0 {
			fmt.Fprintln(e.stdout, name)
			continue
		}
		var msg string
		o, err := rp.r.Object(plumbing.AnyObject, t.Hash())
		if err == nil {
			switch o := o.(type) {
			case *object.Tag:
				msg = o.Message
			case *object.Commit:
				msg = o.Message
			}
		}
		if lines == 0 {
			fmt.Fprintln(e.stdout, name)
			continue
		}
		body := strings.Split(strings.TrimRight(msg, "\n"), "\n")
		if len(body) > lines {
			body = body[:lines]
		}
		fmt.Fprintf(e.stdout, "%-15s %s\n", name, body[0])
		for _, l := range body[1:] {
			fmt.Fprintf(e.stdout, "    %s\n", l)
		}
	}
	return nil
}

// sortTags orders tags by --sort: refname (the default), version:refname
// (v:refname) or creatordate, "-" reversing.
func sortTags(rp *repo, tags []*plumbing.Reference, key string) error {
	desc := strings.HasPrefix(key, "-")
	key = strings.TrimPrefix(key, "-")
	var cmp func(a, b *plumbing.Reference) int
	byName := func(a, b *plumbing.Reference) int { return strings.Compare(a.Name().Short(), b.Name().Short()) }
	switch key {
	case "", "refname":
		cmp = byName
	case "version:refname", "v:refname":
		cmp = func(a, b *plumbing.Reference) int { return versionCompare(a.Name().Short(), b.Name().Short()) }
	case "creatordate", "taggerdate":
		when := func(r *plumbing.Reference) int64 {
			if t, err := rp.r.TagObject(r.Hash()); err == nil {
				return t.Tagger.When.Unix()
			}
			if c, err := peelCommit(rp, r.Hash()); err == nil {
				return c.Committer.When.Unix()
			}
			return 0
		}
		cmp = func(a, b *plumbing.Reference) int {
			if x, y := when(a), when(b); x != y {
				if x < y {
					return -1
				}
				return 1
			}
			return byName(a, b)
		}
	default:
		return fatalf("unknown field name: %s", key)
	}
	slices.SortStableFunc(tags, func(a, b *plumbing.Reference) int {
		if desc {
			return cmp(b, a)
		}
		return cmp(a, b)
	})
	return nil
}

// versionCompare compares names with runs of digits taken as numbers,
// as version sorting does ("v1.10" after "v1.9").
func versionCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := digitRun(a), digitRun(b)
			x, y := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
			if len(x) != len(y) {
				return len(x) - len(y)
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
