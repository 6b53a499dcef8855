package software

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/secexec/secexec/software/aospkg"
)

// Fingerprint is the sha256 of a module's bytes: a stable key for caches of
// compiled modules. Byte-identical aliases have equal fingerprints.
type Fingerprint [sha256.Size]byte

// String returns the digest in lower-case hex.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// FingerprintOf computes the fingerprint of module bytes.
func FingerprintOf(module []byte) Fingerprint { return sha256.Sum256(module) }

// Command is one runnable command: a package command or a registered
// module. It is a small value, safe to copy.
type Command struct {
	// Name is what a user types ("ls").
	Name string
	// Package and Version name the providing package; both are empty for
	// a module added with Store.Register.
	Package string
	Version string
	// Entry is the module's path relative to the package root ("bin/ls");
	// empty for a registered module.
	Entry string
	// Fingerprint identifies the module bytes.
	Fingerprint Fingerprint
	// Size is the module's size in bytes.
	Size int64
	// Env holds "KEY=VALUE" defaults for the environment of the command's
	// processes (from its ModulePin); keys already set are kept.
	Env []string

	mod *module
}

// Module returns the command's module bytes. Bytes read from the cache are
// checked against the fingerprint (ErrCorrupt if they differ). The caller
// owns the returned slice.
func (c Command) Module() ([]byte, error) {
	if c.mod == nil {
		return nil, fmt.Errorf("%w: command %q", ErrNotFound, c.Name)
	}
	return c.mod.read()
}

// module is one distinct module image, shared by every command whose bytes
// have its fingerprint.
type module struct {
	fp   Fingerprint
	size int64
	// Exactly one source: a cached container entry, a cached module
	// file, or registered bytes.
	pkg   *aospkg.Package
	spec  string
	entry string
	file  string
	data  []byte
}

func (m *module) read() ([]byte, error) {
	if m.data != nil {
		return bytes.Clone(m.data), nil
	}
	if m.file != "" {
		return readModuleFile(m)
	}
	b, err := m.pkg.ReadFile(m.entry)
	if err != nil {
		return nil, fmt.Errorf("software: %s: %s: %w", m.spec, m.entry, err)
	}
	if FingerprintOf(b) != m.fp {
		return nil, fmt.Errorf("%w: %s: %s does not match its fingerprint %s", ErrCorrupt, m.spec, m.entry, m.fp)
	}
	return b, nil
}

// rebuild recomputes the command table from the installed packages.
func (s *Store) rebuild() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuildLocked()
}

func (s *Store) rebuildLocked() {
	cmds := make(map[string]Command)
	modules := make(map[Fingerprint]*module)
	for _, c := range s.registered {
		modules[c.Fingerprint] = c.mod
	}
	for _, p := range s.pins {
		ip := s.pkgs[p.Name()]
		if ip == nil {
			continue
		}
		for _, c := range ip.pkg.Commands() {
			fp := ip.fps[c.Entry]
			mod := modules[fp]
			if mod == nil {
				e, _ := ip.pkg.Lookup(c.Entry)
				mod = &module{fp: fp, size: int64(e.Size), pkg: ip.pkg, spec: p.Spec(), entry: c.Entry}
				modules[fp] = mod
			}
			if prev, dup := cmds[c.Command]; dup {
				s.log.Warn("software: command provided by two packages; the first pinned wins",
					"command", c.Command, "kept", prev.Package, "ignored", p.Name())
				continue
			}
			cmds[c.Command] = Command{
				Name: c.Command, Package: p.Name(), Version: p.Version, Entry: c.Entry,
				Fingerprint: fp, Size: mod.size, mod: mod,
			}
		}
	}
	for _, p := range s.mpins {
		im := s.mods[p.Name()]
		if im == nil {
			continue
		}
		if prev := modules[im.mod.fp]; prev == nil {
			modules[im.mod.fp] = im.mod
		}
		for _, name := range p.Commands {
			if prev, dup := cmds[name]; dup {
				s.log.Warn("software: command provided by two packages; the first pinned wins",
					"command", name, "kept", prev.Package, "ignored", p.Name())
				continue
			}
			cmds[name] = Command{Name: name, Package: p.Name(), Version: p.Version,
				Fingerprint: im.mod.fp, Size: im.mod.size, Env: slices.Clone(p.Env), mod: im.mod}
		}
	}
	s.cmds, s.modules = cmds, modules
}

// Command looks up a command by name: registered modules first, then the
// installed packages.
func (s *Store) Command(name string) (Command, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if c, ok := s.registered[name]; ok {
		return c, true
	}
	c, ok := s.cmds[name]
	return c, ok
}

// Commands lists every command, aliases included, sorted by name. A
// registered module hides a package command of the same name.
func (s *Store) Commands() []Command {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Command, 0, len(s.cmds)+len(s.registered))
	for name, c := range s.cmds {
		if _, hidden := s.registered[name]; !hidden {
			out = append(out, c)
		}
	}
	for _, c := range s.registered {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Module returns the bytes of the module with the given fingerprint, from
// whichever command provides it.
func (s *Store) Module(fp Fingerprint) ([]byte, error) {
	s.mu.RLock()
	m := s.modules[fp]
	s.mu.RUnlock()
	if m == nil {
		return nil, fmt.Errorf("%w: module %s", ErrNotFound, fp)
	}
	return m.read()
}

// wasmMagic starts every WebAssembly binary module.
var wasmMagic = []byte("\x00asm")

// Register adds a WebAssembly module of the caller's as the command name,
// replacing an earlier registration of that name and hiding any package
// command of that name. The bytes are copied.
func (s *Store) Register(name string, wasm []byte) (Command, error) {
	if !validCommandName(name) {
		return Command{}, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if !bytes.HasPrefix(wasm, wasmMagic) {
		return Command{}, fmt.Errorf("%w: %q", ErrNotWasm, name)
	}
	fp := FingerprintOf(wasm)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Command{}, ErrClosed
	}
	mod := s.modules[fp]
	if mod == nil || mod.data == nil {
		mod = &module{fp: fp, size: int64(len(wasm)), data: bytes.Clone(wasm)}
	}
	c := Command{Name: name, Fingerprint: fp, Size: mod.size, mod: mod}
	s.registered[name] = c
	s.rebuildLocked()
	return c, nil
}

// Alias makes the installed package command target also reachable as
// name, with the same module and defaults, even after name or target is
// hidden by a registered module (secexec's own sh hides the published
// one, which stays available as brush).
func (s *Store) Alias(name, target string) (Command, error) {
	if !validCommandName(name) {
		return Command{}, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Command{}, ErrClosed
	}
	c, ok := s.cmds[target]
	if !ok {
		return Command{}, fmt.Errorf("%w: command %s", ErrNotFound, target)
	}
	c.Name = name
	s.registered[name] = c
	s.rebuildLocked()
	return c, nil
}

// Unregister removes a module added with Register and reports whether the
// name was registered. A package command it hid becomes visible again.
func (s *Store) Unregister(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.registered[name]; !ok {
		return false
	}
	delete(s.registered, name)
	s.rebuildLocked()
	return true
}

// validCommandName reports whether name can be a file in a PATH directory.
func validCommandName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 &&
		utf8.ValidString(name) && !strings.ContainsAny(name, "/\x00")
}
