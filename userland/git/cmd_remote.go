package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	format "github.com/go-git/go-git/v6/plumbing/format/config"
)

// A remote lives in .git/config as git keeps it:
//
//	[remote "origin"]
//		url = URL
//		fetch = +refs/heads/*:refs/remotes/origin/*
//
// and the commands here read and edit that file directly (not go-git's
// config model, which rewrites sections it does not know).

const remoteUsage = `usage: git remote [-v | --verbose]
   or: git remote add <name> <url>
   or: git remote rename <old> <new>
   or: git remote remove <name>
   or: git remote [-v | --verbose] show [-n] <name>
   or: git remote get-url [--push] [--all] <name>
   or: git remote set-url [--push] <name> <newurl> [<oldurl>]
`

// remoteConfig is one remote's settings.
type remoteConfig struct {
	name  string
	urls  []string
	fetch []string
}

func (rp *repo) configFile() string { return filepath.Join(rp.gitDir(), "config") }

// loadRepoConfig reads the repository's configuration.
func (rp *repo) loadRepoConfig() (*format.Config, error) { return loadConfigFile(rp.configFile()) }

// saveConfig writes cfg as the repository's configuration, atomically.
func saveConfig(file string, cfg *format.Config) error {
	var buf bytes.Buffer
	if err := format.NewEncoder(&buf).Encode(cfg); err != nil {
		return err
	}
	tmp := file + ".lock"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return fatalf("could not write config file %s: %s", file, errText(err))
	}
	return os.Rename(tmp, file)
}

// remotes lists the configured remotes in the file's order.
func remotes(cfg *format.Config) []remoteConfig {
	var out []remoteConfig
	for _, s := range cfg.Sections {
		if !s.IsName("remote") {
			continue
		}
		for _, ss := range s.Subsections {
			out = append(out, remoteConfig{name: ss.Name, urls: ss.Options.GetAll("url"), fetch: ss.Options.GetAll("fetch")})
		}
	}
	return out
}

// findRemote returns the named remote.
func findRemote(cfg *format.Config, name string) (remoteConfig, bool) {
	for _, r := range remotes(cfg) {
		if r.name == name && len(r.urls) > 0 {
			return r, true
		}
	}
	return remoteConfig{}, false
}

// validRemoteName is git's check: a name that makes a valid refspec.
var validRemoteName = regexp.MustCompile(`^[^\x00-\x20\x7f~^:?*\[\\]+$`)

func checkRemoteName(name string) error {
	if !validRemoteName.MatchString(name) || strings.Contains(name, "..") || strings.HasPrefix(name, "/") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") || strings.Contains(name, "@{") ||
		plumbing.ReferenceName("refs/remotes/"+name+"/x").Validate() != nil {
		return fatalf("'%s' is not a valid remote name", name)
	}
	return nil
}

// defaultFetch is the refspec git adds for a new remote.
func defaultFetch(name string) string { return "+refs/heads/*:refs/remotes/" + name + "/*" }

// cmdRemote: git remote [-v] [add|remove|rm|rename|get-url|set-url|show].
func cmdRemote(e *env, args []string) error {
	verbose := false
	for len(args) > 0 && (args[0] == "-v" || args[0] == "--verbose") {
		verbose = true
		args = args[1:]
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	cfg, err := rp.loadRepoConfig()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		for _, r := range remotes(cfg) {
			if !verbose {
				fmt.Fprintln(e.stdout, r.name)
				continue
			}
			u := ""
			if len(r.urls) > 0 {
				u = r.urls[0]
			}
			fmt.Fprintf(e.stdout, "%s\t%s (fetch)\n%s\t%s (push)\n", r.name, u, r.name, u)
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	bad := func() error { return usagef("%s", strings.TrimSuffix(remoteUsage, "\n")) }
	switch sub {
	case "add":
		if len(rest) != 2 || strings.HasPrefix(rest[0], "-") {
			return bad()
		}
		name, u := rest[0], rest[1]
		if err := checkRemoteName(name); err != nil {
			return err
		}
		if _, ok := findRemote(cfg, name); ok {
			return &exitError{code: 3, msg: fmt.Sprintf("error: remote %s already exists.", name)}
		}
		cfg.AddOption("remote", name, "url", u)
		cfg.AddOption("remote", name, "fetch", defaultFetch(name))
		return saveConfig(rp.configFile(), cfg)
	case "remove", "rm":
		if len(rest) != 1 {
			return bad()
		}
		name := rest[0]
		if _, ok := findRemote(cfg, name); !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("error: No such remote: '%s'", name)}
		}
		cfg.RemoveSubsection("remote", name)
		for _, s := range cfg.Sections {
			if !s.IsName("branch") {
				continue
			}
			for _, ss := range s.Subsections {
				if ss.Options.Get("remote") == name {
					ss.RemoveOption("remote")
					ss.RemoveOption("merge")
				}
			}
		}
		dropEmptyBranchSections(cfg)
		if err := saveConfig(rp.configFile(), cfg); err != nil {
			return err
		}
		return deleteRefsUnder(rp, "refs/remotes/"+name+"/")
	case "rename":
		if len(rest) != 2 {
			return bad()
		}
		old, name := rest[0], rest[1]
		if _, ok := findRemote(cfg, old); !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("error: No such remote: '%s'", old)}
		}
		if err := checkRemoteName(name); err != nil {
			return err
		}
		if _, ok := findRemote(cfg, name); ok {
			return &exitError{code: 3, msg: fmt.Sprintf("error: remote %s already exists.", name)}
		}
		for _, s := range cfg.Sections {
			switch {
			case s.IsName("remote"):
				for _, ss := range s.Subsections {
					if ss.Name != old {
						continue
					}
					ss.Name = name
					for _, o := range ss.Options {
						if o.IsKey("fetch") && o.Value == defaultFetch(old) {
							o.Value = defaultFetch(name)
						}
					}
				}
			case s.IsName("branch"):
				for _, ss := range s.Subsections {
					for _, o := range ss.Options {
						if o.IsKey("remote") && o.Value == old {
							o.Value = name
						}
					}
				}
			}
		}
		if err := saveConfig(rp.configFile(), cfg); err != nil {
			return err
		}
		return renameRefsUnder(rp, "refs/remotes/"+old+"/", "refs/remotes/"+name+"/")
	case "get-url":
		rest = dropFlags(rest, "--push", "--all")
		if len(rest) != 1 {
			return bad()
		}
		r, ok := findRemote(cfg, rest[0])
		if !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("error: No such remote '%s'", rest[0])}
		}
		fmt.Fprintln(e.stdout, r.urls[0])
		return nil
	case "set-url":
		rest = dropFlags(rest, "--push")
		if len(rest) < 2 || len(rest) > 3 {
			return bad()
		}
		if _, ok := findRemote(cfg, rest[0]); !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("error: No such remote '%s'", rest[0])}
		}
		setInPlace(cfg, "remote", rest[0], "url", rest[1])
		return saveConfig(rp.configFile(), cfg)
	case "show":
		rest = dropFlags(rest, "-n")
		if len(rest) == 0 {
			for _, r := range remotes(cfg) {
				fmt.Fprintln(e.stdout, r.name)
			}
			return nil
		}
		// Only the configured facts: asking the remote for its branches is
		// left to git fetch and git branch -r.
		for _, name := range rest {
			r, ok := findRemote(cfg, name)
			u := name
			if ok {
				u = r.urls[0]
			}
			fmt.Fprintf(e.stdout, "* remote %s\n  Fetch URL: %s\n  Push  URL: %s\n", name, u, u)
		}
		return nil
	}
	return usagef("error: unknown subcommand: `%s'\n%s", sub, strings.TrimSuffix(remoteUsage, "\n"))
}

// dropFlags removes the given flags from args.
func dropFlags(args []string, flags ...string) []string {
	var out []string
	for _, a := range args {
		skip := false
		for _, f := range flags {
			if a == f {
				skip = true
			}
		}
		if !skip {
			out = append(out, a)
		}
	}
	return out
}

// dropEmptyBranchSections removes [branch "x"] sections left empty.
func dropEmptyBranchSections(cfg *format.Config) {
	for _, s := range cfg.Sections {
		if !s.IsName("branch") {
			continue
		}
		var keep format.Subsections
		for _, ss := range s.Subsections {
			if len(ss.Options) > 0 {
				keep = append(keep, ss)
			}
		}
		s.Subsections = keep
	}
}

// deleteRefsUnder removes every ref whose name starts with prefix.
func deleteRefsUnder(rp *repo, prefix string) error {
	refs, err := rp.r.References()
	if err != nil {
		return err
	}
	var names []plumbing.ReferenceName
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(r.Name().String(), prefix) {
			names = append(names, r.Name())
		}
		return nil
	})
	for _, n := range names {
		if err := rp.r.Storer.RemoveReference(n); err != nil {
			return err
		}
	}
	return nil
}

// renameRefsUnder moves every ref under from to the same name under to;
// a symbolic ref's target moves with it.
func renameRefsUnder(rp *repo, from, to string) error {
	refs, err := rp.r.References()
	if err != nil {
		return err
	}
	var moved []*plumbing.Reference
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(r.Name().String(), from) {
			moved = append(moved, r)
		}
		return nil
	})
	for _, r := range moved {
		n := plumbing.ReferenceName(to + strings.TrimPrefix(r.Name().String(), from))
		var nr *plumbing.Reference
		if r.Type() == plumbing.SymbolicReference {
			t := r.Target().String()
			if strings.HasPrefix(t, from) {
				t = to + strings.TrimPrefix(t, from)
			}
			nr = plumbing.NewSymbolicReference(n, plumbing.ReferenceName(t))
		} else {
			nr = plumbing.NewHashReference(n, r.Hash())
		}
		if err := rp.r.Storer.SetReference(nr); err != nil {
			return err
		}
		if err := rp.r.Storer.RemoveReference(r.Name()); err != nil {
			return err
		}
	}
	return nil
}

// setInPlace sets section.sub.key to value where it already is (git
// keeps an option's place in the file), or adds it at the end of its
// section.
func setInPlace(cfg *format.Config, section, sub, key, value string) {
	if cfg.HasSection(section) {
		s := cfg.Section(section)
		opts := s.Options
		if sub != "" && s.HasSubsection(sub) {
			opts = s.Subsection(sub).Options
		}
		if sub == "" || s.HasSubsection(sub) {
			for _, o := range opts {
				if o.IsKey(key) {
					o.Value = value
					return
				}
			}
		}
	}
	cfg.AddOption(section, sub, key, value)
}
