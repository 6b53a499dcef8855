package aospkg

import (
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Manifest is chunk 1 of a container: what the package is and which
// commands it provides.
type Manifest struct {
	// Schema is the chunk's schema version (1 or 2).
	Schema uint16
	// Name is the runtime package name ("coreutils"), not the npm name.
	Name string
	// Version is the package's own version string.
	Version string
	// Agent is set only for agent (JavaScript) packages. Always nil in
	// schema 2.
	Agent *Agent
	// Provides lists guest-wide environment defaults and read-only mounts.
	Provides *Provides
	// Commands lists every command, aliases included, in manifest order.
	Commands []Command
	// ManPages is empty in every published package.
	ManPages []ManPage
	// SnapshotBundlePath is the optional JS snapshot bundle ("" if absent).
	// Always "" in schema 2.
	SnapshotBundlePath string
}

// Agent describes how to launch an agent package.
type Agent struct {
	ACPEntrypoint string
	Snapshot      bool
	Env           map[string]string
	LaunchArgs    []string
}

// Provides is what a package contributes to every VM that installs it.
type Provides struct {
	// Env holds environment defaults; across packages the first one that
	// sets a key wins.
	Env map[string]string
	// Files are package directories mounted read-only in the guest.
	Files []ProvidedFile
}

// ProvidedFile maps a package directory to a guest path.
type ProvidedFile struct {
	// Source is a clean path relative to the package root.
	Source string
	// Target is a clean absolute guest path.
	Target string
}

// Command is one command of a package.
type Command struct {
	// Command is the name a user types ("ls"); a single path element.
	Command string
	// Entry is the executable's clean path relative to the package root
	// ("bin/ls").
	Entry string
}

// ManPage names one manual page.
type ManPage struct {
	Section string
	Page    string
}

// Limits on single values. Generous for every published package, small
// enough that nothing a package says can make a consumer do much work.
const (
	maxStringLen = 64 << 10
	maxNameLen   = 255  // NAME_MAX
	maxPathLen   = 4096 // PATH_MAX
)

func decodeManifest(d *decoder) (Manifest, error) {
	var m Manifest
	schema, err := d.u16("manifest schema")
	if err != nil {
		return m, err
	}
	switch schema {
	case 1, 2:
		// Schema 2 is schema 1 without the agent block and the snapshot
		// bundle path; no published package uses it yet.
	default:
		d.off -= 2
		return m, d.fail(ErrUnsupportedSchema, "manifest schema "+strconv.Itoa(int(schema)))
	}
	m.Schema = schema
	at := d.off
	if m.Name, err = d.str(maxNameLen, "package name"); err != nil {
		return m, err
	}
	if !validName(m.Name) {
		d.off = at
		return m, d.fail(ErrBadName, "package name "+strconv.Quote(m.Name))
	}
	if m.Version, err = d.str(maxNameLen, "package version"); err != nil {
		return m, err
	}
	if schema == 1 {
		if m.Agent, err = decodeAgent(d); err != nil {
			return m, err
		}
	}
	if m.Provides, err = decodeProvides(d); err != nil {
		return m, err
	}
	if m.Commands, err = decodeCommands(d); err != nil {
		return m, err
	}
	n, err := d.count(2, "man pages")
	if err != nil {
		return m, err
	}
	m.ManPages = make([]ManPage, 0, n)
	for range n {
		var p ManPage
		if p.Section, err = d.str(maxNameLen, "man page section"); err != nil {
			return m, err
		}
		if p.Page, err = d.str(maxNameLen, "man page"); err != nil {
			return m, err
		}
		m.ManPages = append(m.ManPages, p)
	}
	if schema == 1 {
		present, err := d.tag("snapshot bundle path")
		if err != nil {
			return m, err
		}
		if present {
			if m.SnapshotBundlePath, err = d.str(maxPathLen, "snapshot bundle path"); err != nil {
				return m, err
			}
		}
	}
	return m, d.end("manifest")
}

func decodeAgent(d *decoder) (*Agent, error) {
	present, err := d.tag("agent")
	if err != nil || !present {
		return nil, err
	}
	a := new(Agent)
	if a.ACPEntrypoint, err = d.str(maxPathLen, "agent entrypoint"); err != nil {
		return nil, err
	}
	if a.Snapshot, err = d.tag("agent snapshot"); err != nil {
		return nil, err
	}
	if a.Env, err = d.strMap("agent env", validEnvKey); err != nil {
		return nil, err
	}
	if a.LaunchArgs, err = d.strList("agent launch args"); err != nil {
		return nil, err
	}
	return a, nil
}

func decodeProvides(d *decoder) (*Provides, error) {
	present, err := d.tag("provides")
	if err != nil || !present {
		return nil, err
	}
	p := new(Provides)
	if p.Env, err = d.strMap("provides env", validEnvKey); err != nil {
		return nil, err
	}
	n, err := d.count(2, "provides files")
	if err != nil {
		return nil, err
	}
	p.Files = make([]ProvidedFile, 0, n)
	for range n {
		var f ProvidedFile
		at := d.off
		if f.Source, err = d.str(maxPathLen, "provides source"); err != nil {
			return nil, err
		}
		if !cleanRel(f.Source) {
			d.off = at
			return nil, d.fail(ErrBadPath, "provides source "+strconv.Quote(f.Source))
		}
		at = d.off
		if f.Target, err = d.str(maxPathLen, "provides target"); err != nil {
			return nil, err
		}
		if !cleanAbs(f.Target) {
			d.off = at
			return nil, d.fail(ErrBadPath, "provides target "+strconv.Quote(f.Target))
		}
		p.Files = append(p.Files, f)
	}
	return p, nil
}

func decodeCommands(d *decoder) ([]Command, error) {
	n, err := d.count(2, "commands")
	if err != nil {
		return nil, err
	}
	cmds := make([]Command, 0, n)
	seen := make(map[string]bool, n)
	for range n {
		var c Command
		at := d.off
		if c.Command, err = d.str(maxNameLen, "command name"); err != nil {
			return nil, err
		}
		if !validName(c.Command) {
			d.off = at
			return nil, d.fail(ErrBadName, "command "+strconv.Quote(c.Command))
		}
		if seen[c.Command] {
			d.off = at
			return nil, d.fail(ErrDuplicate, "command "+strconv.Quote(c.Command))
		}
		seen[c.Command] = true
		at = d.off
		if c.Entry, err = d.str(maxPathLen, "command entry"); err != nil {
			return nil, err
		}
		if !cleanRel(c.Entry) || c.Entry == "." {
			d.off = at
			return nil, d.fail(ErrBadPath, "command entry "+strconv.Quote(c.Entry))
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// validName reports whether s can be one path element: a package or
// command name. Strings reaching here are already UTF-8 without NUL.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= maxNameLen && !strings.ContainsRune(s, '/')
}

// validEnvKey reports whether s can be an environment variable name.
func validEnvKey(s string) bool {
	return s != "" && !strings.ContainsRune(s, '=')
}

// cleanAbs reports whether p is a clean absolute path: it starts with "/",
// has no empty, "." or ".." elements and no trailing slash (except "/").
func cleanAbs(p string) bool {
	return len(p) <= maxPathLen && strings.HasPrefix(p, "/") && path.Clean(p) == p
}

// cleanRel reports whether p is a clean relative path that stays inside the
// directory it is relative to ("." itself is allowed).
func cleanRel(p string) bool {
	if p == "" || len(p) > maxPathLen || strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return false
	}
	return p != ".." && !strings.HasPrefix(p, "../")
}

// clone returns a deep copy, so callers can never modify a Package.
func (m Manifest) clone() Manifest {
	c := m
	if m.Agent != nil {
		a := *m.Agent
		a.Env = maps.Clone(a.Env)
		a.LaunchArgs = slices.Clone(a.LaunchArgs)
		c.Agent = &a
	}
	if m.Provides != nil {
		p := Provides{Env: maps.Clone(m.Provides.Env), Files: slices.Clone(m.Provides.Files)}
		c.Provides = &p
	}
	c.Commands = slices.Clone(m.Commands)
	c.ManPages = slices.Clone(m.ManPages)
	return c
}
