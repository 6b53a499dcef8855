package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// cmdShow: git show [options] [<object>...] [-- <path>...]: a commit
// with its patch (or the diff formats asked for), an annotated tag and
// its commit, a tree's entries or a blob's content.
func cmdShow(e *env, args []string) error {
	lo := &logOpts{format: "medium", max: -1, showMerges: true}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "-q" || a == "--quiet" {
			continue
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			n, err := lo.parseOption(a, args[i+1:])
			if err != nil {
				return err
			}
			if n < 0 {
				return fatalf("unrecognized argument: %s", a)
			}
			i += n
			continue
		}
		rest = append(rest, a)
	}
	noPatch := slicesContains(args, "-s") || slicesContains(args, "--no-patch") || slicesContains(args, "-q") || slicesContains(args, "--quiet")
	if !lo.diff.any() && !noPatch {
		lo.diff.patch = true
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	revs, paths, err := splitRevsPaths(rp, rest)
	if err != nil {
		return err
	}
	if len(revs) == 0 {
		head, err := rp.head()
		if err != nil {
			return err
		}
		if head == nil {
			return unknownRevision("HEAD")
		}
		revs = []string{"HEAD"}
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	deco, err := decorations(rp, lo.decorate || strings.Contains(lo.format, "%d") || strings.Contains(lo.format, "%D"))
	if err != nil {
		return err
	}
	p := &printer{w: e.stdout, rp: rp, lo: lo, deco: deco, specs: specs}
	for _, rev := range revs {
		h, err := resolveRevision(rp, rev)
		if err != nil {
			return err
		}
		if err := showObject(e, p, rev, h); err != nil {
			return err
		}
	}
	return nil
}

func slicesContains(args []string, s string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == s {
			return true
		}
	}
	return false
}

// maxTagDepth bounds a chain of tags pointing at tags.
const maxTagDepth = 16

func showObject(e *env, p *printer, name string, h plumbing.Hash) error {
	for range maxTagDepth {
		o, err := p.rp.r.Object(plumbing.AnyObject, h)
		if err != nil {
			return fatalf("bad object %s", name)
		}
		switch o := o.(type) {
		case *object.Commit:
			return p.commit(o)
		case *object.Tag:
			writeTag(e.stdout, p, o)
			p.shown = true
			h, name = o.Target, o.Target.String()
		case *object.Tree:
			if p.shown {
				fmt.Fprintln(e.stdout)
			}
			fmt.Fprintf(e.stdout, "tree %s\n\n", name)
			for _, ent := range o.Entries {
				if ent.Mode == filemode.Dir {
					fmt.Fprintf(e.stdout, "%s/\n", ent.Name)
				} else {
					fmt.Fprintln(e.stdout, ent.Name)
				}
			}
			p.shown = true
			return nil
		case *object.Blob:
			rd, err := o.Reader()
			if err != nil {
				return err
			}
			defer rd.Close()
			_, err = io.Copy(e.stdout, rd)
			p.shown = true
			return err
		default:
			return fatalf("bad object %s", name)
		}
	}
	return fatalf("%s: tag chain too long", name)
}

// writeTag is an annotated tag's header and message, as git show
// prints it before the tagged object.
func writeTag(w io.Writer, p *printer, t *object.Tag) {
	if p.shown && !p.lo.terminator {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "tag %s\nTagger: %s <%s>\n", t.Name, t.Tagger.Name, t.Tagger.Email)
	if !p.lo.user && p.lo.format != "oneline" {
		fmt.Fprintf(w, "Date:   %s\n", p.date(t.Tagger))
	}
	fmt.Fprintf(w, "\n%s", t.Message)
}
