package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v6/osfs"
	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/config"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/cache"
	format "github.com/go-git/go-git/v6/plumbing/format/config"
	"github.com/go-git/go-git/v6/plumbing/transport"
	"github.com/go-git/go-git/v6/storage/filesystem"
)

// cloneOptions are git clone's options.
type cloneOptions struct {
	quiet, bare bool
	branch      string
	origin      string
	depth       int
	url, dir    string
}

func parseClone(args []string) (*cloneOptions, error) {
	o := &cloneOptions{origin: "origin"}
	var rest []string
	bad := func(a string) error {
		return usagef("error: unknown option `%s'\nusage: git clone [-q] [-b <branch>] [-o <name>] [--depth <n>] [--bare] <repo> [<dir>]", strings.TrimLeft(a, "-"))
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "-q" || a == "--quiet":
			o.quiet = true
		case a == "--bare":
			o.bare = true
		case a == "-b" || a == "--branch":
			v, ok := val()
			if !ok {
				return nil, bad(a)
			}
			o.branch = v
		case strings.HasPrefix(a, "--branch="):
			o.branch = strings.TrimPrefix(a, "--branch=")
		case a == "-o" || a == "--origin":
			v, ok := val()
			if !ok {
				return nil, bad(a)
			}
			o.origin = v
		case strings.HasPrefix(a, "--origin="):
			o.origin = strings.TrimPrefix(a, "--origin=")
		case a == "--depth" || strings.HasPrefix(a, "--depth="):
			v, ok := strings.CutPrefix(a, "--depth=")
			if !ok {
				if v, ok = val(); !ok {
					return nil, bad(a)
				}
			}
			if o.depth = atoiOr(v, -1); o.depth <= 0 {
				return nil, fatalf("depth %s is not a positive number", v)
			}
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return nil, bad(a)
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 || len(rest) > 2 {
		return nil, usagef("fatal: You must specify a repository to clone.\n\nusage: git clone [<options>] [--] <repo> [<dir>]")
	}
	o.url = rest[0]
	if len(rest) == 2 {
		o.dir = rest[1]
	} else if o.dir = guessDir(o.url, o.bare); o.dir == "" || o.dir == ".git" {
		return nil, fatalf("No directory name could be guessed.\nPlease specify a directory on the command line")
	}
	return o, nil
}

// guessDir is git's directory name for a clone of u: its last path
// component without "/.git" or ".git".
func guessDir(u string, bare bool) string {
	if isURL(u) {
		// Past the scheme and any user: a URL without a path names the
		// host (without its port).
		rest := u[strings.Index(u, "://")+3:]
		if i := strings.LastIndexByte(strings.SplitN(rest, "/", 2)[0], '@'); i >= 0 {
			rest = rest[i+1:]
		}
		host, path, _ := strings.Cut(rest, "/")
		if strings.Trim(path, "/") == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			u = host
		} else {
			u = path
		}
	}
	s := strings.TrimRight(u, "/")
	s = strings.TrimSuffix(s, "/.git")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSuffix(s, ".git")
	if bare {
		s += ".git"
	}
	return s
}

// cmdClone: git clone [-q] [-b BRANCH] [-o NAME] [--depth N] [--bare] REPO [DIR].
func cmdClone(e *env, args []string) (err error) {
	o, err := parseClone(args)
	if err != nil {
		return err
	}
	if o.origin == "" || checkRemoteName(o.origin) != nil {
		return fatalf("'%s' is not a valid remote name", o.origin)
	}
	if err := checkScheme(o.url); err != nil {
		return err
	}
	if entries, err := os.ReadDir(o.dir); err == nil && len(entries) > 0 {
		return fatalf("destination path '%s' already exists and is not an empty directory.", o.dir)
	} else if err != nil && !os.IsNotExist(err) {
		if fi, serr := os.Stat(o.dir); serr == nil && !fi.IsDir() {
			return fatalf("destination path '%s' already exists and is not an empty directory.", o.dir)
		}
	}
	local := !isURL(o.url)
	u := o.url
	if local {
		if localPath(o.url) == "" {
			return fatalf("repository '%s' does not exist", o.url)
		}
		abs, err := filepath.Abs(o.url)
		if err != nil {
			return err
		}
		u = abs
	} else if strings.HasPrefix(u, "file://") && localPath(u) == "" {
		return fatalf("'%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.", strings.TrimPrefix(u, "file://"))
	}
	if !o.quiet {
		if o.bare {
			fmt.Fprintf(e.stderr, "Cloning into bare repository '%s'...\n", o.dir)
		} else {
			fmt.Fprintf(e.stderr, "Cloning into '%s'...\n", o.dir)
		}
	}
	if local && o.depth > 0 {
		fmt.Fprintln(e.stderr, "warning: --depth is ignored in local clones; use file:// instead.")
		o.depth = 0
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(abs)
	created := os.IsNotExist(statErr)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fatalf("could not create work tree dir '%s': %s", o.dir, errText(err))
	}
	// A failed clone leaves nothing behind, as with git.
	defer func() {
		if err == nil {
			return
		}
		if created {
			os.RemoveAll(abs)
		} else if entries, _ := os.ReadDir(abs); entries != nil {
			for _, en := range entries {
				os.RemoveAll(filepath.Join(abs, en.Name()))
			}
		}
	}()
	if err := cloneInto(e, o, u, abs); err != nil {
		return err
	}
	if local && !o.quiet {
		fmt.Fprintln(e.stderr, "done.")
	}
	return nil
}

// openAt opens the repository made at root (its .git, or root itself
// when bare).
func openAt(root string, bare bool) (*repo, error) {
	if bare {
		r, err := git.Open(filesystem.NewStorage(osfs.New(root, osfs.WithBoundOS()), cache.NewObjectLRUDefault()), nil)
		if err != nil {
			return nil, err
		}
		return &repo{r: r, root: root, dot: root, cwd: root}, nil
	}
	dot := osfs.New(filepath.Join(root, ".git"), osfs.WithBoundOS())
	wtfs := worktreeFS(osfs.New(root, osfs.WithBoundOS()))
	r, err := git.Open(filesystem.NewStorage(dot, cache.NewObjectLRUDefault()), wtfs)
	if err != nil {
		return nil, err
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	return &repo{r: r, wt: wt, root: root, dot: filepath.Join(root, ".git"), cwd: root}, nil
}

func cloneInto(e *env, o *cloneOptions, u, abs string) error {
	if _, err := git.PlainInit(abs, o.bare); err != nil {
		return err
	}
	rp, err := openAt(abs, o.bare)
	if err != nil {
		return err
	}
	cfgFile := filepath.Join(abs, ".git", "config")
	if o.bare {
		cfgFile = filepath.Join(abs, "config")
	}
	if err := writeGitCore(cfgFile, o.bare); err != nil {
		return err
	}
	cfg, err := loadConfigFile(cfgFile)
	if err != nil {
		return err
	}
	spec := defaultFetch(o.origin)
	cfg.AddOption("remote", o.origin, "url", u)
	if o.bare {
		spec = "+refs/heads/*:refs/heads/*"
	} else {
		cfg.AddOption("remote", o.origin, "fetch", spec)
	}
	if err := saveConfig(cfgFile, cfg); err != nil {
		return err
	}
	// A path is cloned as git clones one: the object files are copied
	// and the refs read from the source, with no pack made and parsed (a
	// file:// URL goes through the transport, as in git). The
	// advertisement, or the source's refs, name the remote's HEAD branch.
	var list []*plumbing.Reference
	srcGit := ""
	if !isURL(o.url) {
		srcGit = localPath(u)
		if list, err = localRefs(srcGit); err != nil {
			srcGit = ""
		}
	}
	unborn := plumbing.ReferenceName("")
	if srcGit == "" {
		rr, err := listRemote(u)
		if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return transportError(o.url, err)
		}
		if rr != nil {
			list, unborn = rr.References, rr.Unborn
		}
	}
	headTarget := plumbing.ReferenceName("")
	var headHash plumbing.Hash
	remoteRefs := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, r := range list {
		if !validRemoteRef(r.Name()) {
			continue
		}
		switch {
		case r.Name() == plumbing.HEAD && r.Type() == plumbing.SymbolicReference:
			headTarget = r.Target()
		case r.Name() == plumbing.HEAD:
			headHash = r.Hash()
		default:
			remoteRefs[r.Name()] = r.Hash()
		}
	}
	if headTarget == "" && !headHash.IsZero() {
		// No symref capability: the branch at HEAD's commit, preferring
		// main and master as git does.
		for _, n := range []plumbing.ReferenceName{"refs/heads/main", "refs/heads/master"} {
			if remoteRefs[n] == headHash {
				headTarget = n
				break
			}
		}
		if headTarget == "" {
			for n, h := range remoteRefs {
				if n.IsBranch() && h == headHash && (headTarget == "" || n < headTarget) {
					headTarget = n
				}
			}
		}
	}
	checkout := headTarget
	if o.branch != "" {
		checkout = plumbing.NewBranchReferenceName(o.branch)
		if _, ok := remoteRefs[checkout]; !ok {
			if _, ok := remoteRefs[plumbing.NewTagReferenceName(o.branch)]; !ok {
				return fatalf("Remote branch %s not found in upstream %s", o.branch, o.origin)
			}
			checkout = plumbing.NewTagReferenceName(o.branch)
		}
	}
	if len(remoteRefs) == 0 {
		fmt.Fprintln(e.stderr, "warning: You appear to have cloned an empty repository.")
		// HEAD names the remote's unborn branch (protocol v2 tells it),
		// set up to track it.
		if unborn == "" {
			unborn = headTarget
		}
		if !unborn.IsBranch() {
			return nil
		}
		if err := rp.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, unborn)); err != nil {
			return err
		}
		if o.bare {
			return nil
		}
		cfg, err := loadConfigFile(cfgFile)
		if err != nil {
			return err
		}
		cfg.AddOption("branch", unborn.Short(), "remote", o.origin)
		cfg.AddOption("branch", unborn.Short(), "merge", unborn.String())
		return saveConfig(cfgFile, cfg)
	}
	tags := plumbing.AllTags
	if o.depth > 0 && checkout.IsBranch() {
		// --depth implies --single-branch: only the branch checked out is
		// fetched (and configured), with the tags that point into it.
		spec = "+" + checkout.String() + ":" + plumbing.NewRemoteReferenceName(o.origin, checkout.Short()).String()
		if o.bare {
			spec = "+" + checkout.String() + ":" + checkout.String()
		} else {
			cfg, err := loadConfigFile(cfgFile)
			if err != nil {
				return err
			}
			setInPlace(cfg, "remote", o.origin, "fetch", spec)
			if err := saveConfig(cfgFile, cfg); err != nil {
				return err
			}
		}
		tags = plumbing.TagFollowing
	}
	if srcGit != "" {
		if err := copyObjects(srcGit, rp.gitDir()); err != nil {
			return fatalf("copying objects from '%s': %s", o.url, errText(err))
		}
		// Reopened so that the storage sees the copied packs.
		if rp, err = openAt(abs, o.bare); err != nil {
			return err
		}
		rs := config.RefSpec(spec)
		for n, h := range remoteRefs {
			var dst plumbing.ReferenceName
			switch {
			case rs.Match(n):
				dst = rs.Dst(n)
			case n.IsTag():
				dst = n
			default:
				continue
			}
			if err := rp.r.Storer.SetReference(plumbing.NewHashReference(dst, h)); err != nil {
				return err
			}
		}
	} else if _, _, err := fetchRefs(rp, fetchSpec{remote: o.origin, url: u, specs: []config.RefSpec{config.RefSpec(spec)}, tags: tags, depth: o.depth}); err != nil {
		return err
	}
	st := rp.r.Storer
	if !o.bare && headTarget.IsBranch() && config.RefSpec(spec).Match(headTarget) {
		origHead := plumbing.NewRemoteHEADReferenceName(o.origin)
		target := plumbing.NewRemoteReferenceName(o.origin, headTarget.Short())
		if err := st.SetReference(plumbing.NewSymbolicReference(origHead, target)); err != nil {
			return err
		}
	}
	if checkout == "" {
		return nil
	}
	h := remoteRefs[checkout]
	if checkout.IsTag() {
		// A tag is checked out detached, at the commit it names.
		c, err := rp.r.ResolveRevision(plumbing.Revision(checkout.String() + "^{commit}"))
		if err != nil {
			return err
		}
		if err := st.SetReference(plumbing.NewHashReference(plumbing.HEAD, *c)); err != nil {
			return err
		}
		h = *c
		if !o.bare && !o.quiet {
			fmt.Fprintf(e.stderr, detachedAdvice, h)
		}
	} else {
		if !o.bare {
			if err := st.SetReference(plumbing.NewHashReference(checkout, h)); err != nil {
				return err
			}
			cfg, err := loadConfigFile(cfgFile)
			if err != nil {
				return err
			}
			cfg.AddOption("branch", checkout.Short(), "remote", o.origin)
			cfg.AddOption("branch", checkout.Short(), "merge", checkout.String())
			if err := saveConfig(cfgFile, cfg); err != nil {
				return err
			}
		}
		if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, checkout)); err != nil {
			return err
		}
	}
	if o.bare {
		return nil
	}
	return rp.wt.Reset(&git.ResetOptions{Commit: h, Mode: git.HardReset})
}

// writeGitCore replaces the [core] section go-git's init writes with the
// one git writes, so that git config -l reads the same in a repository
// made here as in one made by git.
func writeGitCore(cfgFile string, bare bool) error {
	cfg, err := loadConfigFile(cfgFile)
	if err != nil {
		return err
	}
	fresh := format.New()
	fresh.SetOption("core", "", "repositoryformatversion", "0")
	fresh.SetOption("core", "", "filemode", "true")
	fresh.SetOption("core", "", "bare", fmt.Sprint(bare))
	if !bare {
		fresh.SetOption("core", "", "logallrefupdates", "true")
	}
	for _, s := range cfg.Sections {
		if !s.IsName("core") {
			fresh.Sections = append(fresh.Sections, s)
		}
	}
	return saveConfig(cfgFile, fresh)
}

// errAlternates marks a source whose objects are partly elsewhere: it is
// cloned through the transport instead.
var errAlternates = errors.New("objects/info/alternates")

// localRefs lists a local repository's refs and its HEAD as stored.
func localRefs(gitDir string) ([]*plumbing.Reference, error) {
	if _, err := os.Stat(filepath.Join(gitDir, "objects", "info", "alternates")); err == nil {
		return nil, errAlternates
	}
	if _, err := os.Stat(filepath.Join(gitDir, "shallow")); err == nil {
		// A shallow source: the transport knows to carry the boundary.
		return nil, errAlternates
	}
	st := filesystem.NewStorage(osfs.New(gitDir, osfs.WithBoundOS()), cache.NewObjectLRUDefault())
	iter, err := st.IterReferences()
	if err != nil {
		return nil, err
	}
	var out []*plumbing.Reference
	err = iter.ForEach(func(r *plumbing.Reference) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if head, err := st.Reference(plumbing.HEAD); err == nil {
		out = append(out, head)
	}
	return out, nil
}

// copyObjects copies the object files (loose objects, packs and their
// indexes) of one git directory into another, as git's local clone does
// (it hard-links them where it can; a copy is what every filesystem
// allows).
func copyObjects(srcGit, dstGit string) error {
	src, dst := filepath.Join(srcGit, "objects"), filepath.Join(dstGit, "objects")
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular() || strings.HasPrefix(d.Name(), "tmp_"):
			return nil
		}
		return copyFile(p, target)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// detachedAdvice is git's note on checking out a tag.
const detachedAdvice = `Note: switching to '%s'.

You are in 'detached HEAD' state. You can look around, make experimental
changes and commit them, and you can discard any commits you make in this
state without impacting any branches by switching back to a branch.

If you want to create a new branch to retain commits you create, you may
do so (now or later) by using -c with the switch command. Example:

  git switch -c <new-branch-name>

Or undo this operation with:

  git switch -

Turn off this advice by setting config variable advice.detachedHead to false

`
