package secexec

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/snapshot"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/errno"
)

// SnapshotStore keeps VM snapshots durably, in a local directory or in
// S3-compatible object storage: each file's content once (by SHA-256,
// gzip-compressed) however many snapshots hold it, and one manifest per
// snapshot, written after every content it names. In a directory every
// write goes to a temporary name, is fsynced and renamed into place; in
// S3 every object is one atomic PUT. Either way a crash (kill -9
// included) in the middle of a snapshot leaves every earlier snapshot
// readable. Its methods are safe for concurrent use.
type SnapshotStore struct {
	st  snapshot.Store
	loc string
	// creds is a pointer so that printing a store (%+v, which does not
	// call the String method of an unexported field) shows an address,
	// not the secret.
	creds *snapshot.Credentials
}

// StoreCredentials authenticate to an S3 snapshot store. They are handed
// to engine processes through the engine protocol, never their argv or
// environment, and print as a redacted placeholder.
type StoreCredentials = snapshot.Credentials

// OpenSnapshotStore opens (creating it if needed) the store in dir.
func OpenSnapshotStore(dir string) (*SnapshotStore, error) {
	st, err := snapshot.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	return &SnapshotStore{st: st, loc: st.Dir(), creds: &snapshot.Credentials{}}, nil
}

// OpenSnapshotStoreAt opens the store at loc: a directory, or
// s3://BUCKET[/PREFIX][?endpoint=http(s)://HOST:PORT][&region=REGION]
// (AWS S3 when no endpoint is given) with creds, which the URL itself
// must not carry.
func OpenSnapshotStoreAt(loc string, creds StoreCredentials) (*SnapshotStore, error) {
	if !snapshot.IsS3(loc) {
		return OpenSnapshotStore(loc)
	}
	st, err := snapshot.OpenS3(loc, creds)
	if err != nil {
		return nil, err
	}
	return &SnapshotStore{st: st, loc: loc, creds: &creds}, nil
}

// Dir returns the store's directory ("" for an S3 store).
func (s *SnapshotStore) Dir() string {
	if d, ok := s.st.(*snapshot.DirStore); ok {
		return d.Dir()
	}
	return ""
}

func (s *SnapshotStore) credentials() snapshot.Credentials {
	if s.creds == nil {
		return snapshot.Credentials{}
	}
	return *s.creds
}

// Location returns the store's directory or s3:// URL.
func (s *SnapshotStore) Location() string { return s.loc }

// Get returns the snapshot id, checking its manifest against its id. An
// unknown id is an error matching fs.ErrNotExist.
func (s *SnapshotStore) Get(ctx context.Context, id string) (*Snapshot, error) {
	m, err := snapshot.Load(ctx, s.st, id)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{ID: m.ID, Store: s, Created: m.Created, Files: m.Files, Bytes: m.Bytes, Stored: m.Stored}
	if err := snap.setMeta(m.Meta); err != nil {
		return nil, err
	}
	snap.mounts = memoryMounts(m.Summary().Mounts)
	return snap, nil
}

// List returns the store's snapshots, oldest first.
func (s *SnapshotStore) List(ctx context.Context) ([]*Snapshot, error) {
	ids, err := s.st.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Snapshot, 0, len(ids))
	for _, id := range ids {
		snap, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	sortSnapshots(out)
	return out, nil
}

func sortSnapshots(s []*Snapshot) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Created.Before(s[j-1].Created); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Delete removes the snapshot id and the stored file contents that no
// other snapshot holds. An unknown id is an error matching
// fs.ErrNotExist.
func (s *SnapshotStore) Delete(ctx context.Context, id string) error {
	return s.st.Delete(ctx, id)
}

// Snapshot is a saved VM: its writable filesystems (the root's changes
// over the userland, /tmp, memory mounts; never host mounts) and the
// options it ran with. Options.From starts a new VM from it.
type Snapshot struct {
	// ID names the snapshot in its store: 32 hex digits derived from the
	// content of its manifest.
	ID string
	// Store holds the snapshot.
	Store *SnapshotStore
	// Created is when it was taken.
	Created time.Time
	// Files and Bytes count its regular files and their bytes.
	Files int
	Bytes int64
	// Stored is what taking it added to the store: the compressed bytes
	// of the file contents no earlier snapshot had.
	Stored int64
	// Labels and Restart are the SnapshotOptions it was taken with.
	Labels  map[string]string
	Restart [][]string

	meta   snapshotMeta
	mounts []string
}

// SnapshotOptions describe a snapshot beyond the VM's state.
type SnapshotOptions struct {
	// Labels are free-form key=value pairs kept with the snapshot (at
	// most MaxSnapshotLabels, keys up to 128 bytes, values up to 1024).
	Labels map[string]string
	// Restart are commands (argv) a VM restored from the snapshot starts
	// in the background, in order: the processes a snapshot cannot keep
	// (at most MaxSnapshotRestart).
	Restart [][]string
}

// Bounds of SnapshotOptions.
const (
	MaxSnapshotLabels  = 64
	MaxSnapshotRestart = 16
)

// snapshotMeta is what a snapshot keeps of the VM's options.
type snapshotMeta struct {
	Env         map[string]string `json:"env,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	Hostname    string            `json:"hostname,omitempty"`
	Clock       Clock             `json:"clock,omitempty"`
	Permissions *Permissions      `json:"permissions,omitempty"`
	Limits      Limits            `json:"limits"`
	Labels      map[string]string `json:"labels,omitempty"`
	Restart     [][]string        `json:"restart,omitempty"`
}

func (s *Snapshot) setMeta(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, &s.meta); err != nil {
		return fmt.Errorf("snapshot %s: metadata: %w: %w", s.ID, snapshot.ErrCorrupt, err)
	}
	s.Labels, s.Restart = s.meta.Labels, s.meta.Restart
	return nil
}

func checkSnapshotOptions(o SnapshotOptions) error {
	if len(o.Labels) > MaxSnapshotLabels {
		return fmt.Errorf("secexec: %d snapshot labels, at most %d: %w", len(o.Labels), MaxSnapshotLabels, errno.EINVAL)
	}
	for k, v := range o.Labels {
		if k == "" || len(k) > 128 || len(v) > 1024 {
			return fmt.Errorf("secexec: snapshot label %.40q: %w", k, errno.EINVAL)
		}
	}
	if len(o.Restart) > MaxSnapshotRestart {
		return fmt.Errorf("secexec: %d restart commands, at most %d: %w", len(o.Restart), MaxSnapshotRestart, errno.EINVAL)
	}
	for _, argv := range o.Restart {
		n := 0
		for _, a := range argv {
			n += len(a)
		}
		if len(argv) == 0 || len(argv) > 256 || n > 64<<10 {
			return fmt.Errorf("secexec: restart command %q: %w", argv, errno.EINVAL)
		}
	}
	return nil
}

// Snapshot saves the VM to store: every file guests wrote (the root's
// changes over the userland, /tmp and memory mounts; host mounts are the
// host's and not saved), and the VM's env, working directory, hostname,
// clock, permissions and limits. Unchanged files and the userland are not
// stored again. Processes keep running; a file written while it is being
// saved makes Snapshot fail with an error matching errno.EAGAIN rather
// than save it torn.
func (v *VM) Snapshot(ctx context.Context, store *SnapshotStore, opts SnapshotOptions) (*Snapshot, error) {
	if store == nil {
		return nil, fmt.Errorf("secexec: Snapshot: no store: %w", errno.EINVAL)
	}
	if err := checkSnapshotOptions(opts); err != nil {
		return nil, err
	}
	meta := snapshotMeta{Env: v.opts.Env, Cwd: v.opts.Cwd, Hostname: v.opts.Hostname, Clock: v.opts.Clock,
		Permissions: v.opts.Permissions, Limits: v.opts.Limits, Labels: opts.Labels, Restart: opts.Restart}
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("secexec: snapshot: %w", err)
	}
	b, ok := v.b.(*apiBackend)
	if !ok {
		return nil, fmt.Errorf("secexec: Snapshot: %w", errno.ENOSYS)
	}
	snapper, ok := b.api.(interface {
		SnapshotTo(ctx context.Context, loc string, creds snapshot.Credentials, meta []byte) (snapshot.Summary, error)
	})
	if !ok {
		return nil, fmt.Errorf("secexec: Snapshot: %w", errno.ENOSYS)
	}
	sum, err := snapper.SnapshotTo(ctx, store.loc, store.credentials(), raw)
	if err != nil {
		return nil, apiErr(err)
	}
	snap := &Snapshot{ID: sum.ID, Store: store, Created: sum.Created, Files: sum.Files, Bytes: sum.Bytes, Stored: sum.Stored,
		Labels: opts.Labels, Restart: opts.Restart, meta: meta, mounts: memoryMounts(sum.Mounts)}
	return snap, nil
}

// memoryMounts returns the layers of a snapshot that are memory mounts.
func memoryMounts(layers []string) []string {
	var out []string
	for _, l := range layers {
		if l != "/" && l != "/tmp" {
			out = append(out, l)
		}
	}
	return out
}

// seed is how a new VM's filesystems start: empty, from a snapshot, or
// shared copy-on-write with a VM it forks.
type seed struct {
	from   *Snapshot
	parent *VM
}

// applySnapshot returns opts with what snap saved filling what opts
// leaves unset: the env (opts.Env on top), the working directory,
// hostname, clock, permissions and limits, and a memory mount for each
// of the snapshot's.
func applySnapshot(opts Options, snap *Snapshot) Options {
	m := snap.meta
	if len(m.Env) > 0 {
		env := make(map[string]string, len(m.Env)+len(opts.Env))
		for k, val := range m.Env {
			env[k] = val
		}
		for k, val := range opts.Env {
			env[k] = val
		}
		opts.Env = env
	}
	if opts.Cwd == "" {
		opts.Cwd = m.Cwd
	}
	if opts.Hostname == "" {
		opts.Hostname = m.Hostname
	}
	if opts.Clock == ClockCoarse && !opts.RealTime {
		opts.Clock = m.Clock
	}
	if opts.Permissions == nil {
		opts.Permissions = m.Permissions
	}
	if opts.Limits == (Limits{}) {
		opts.Limits = m.Limits
	}
	mounts := append([]Mount(nil), opts.Mounts...)
next:
	for _, p := range snap.mounts {
		for _, mt := range mounts {
			if mt.Path == p {
				continue next
			}
		}
		mounts = append(mounts, Mount{Path: p})
	}
	opts.Mounts = mounts
	return opts
}

// Fork returns a new VM that starts with this VM's files, shared
// copy-on-write: neither sees what the other writes afterwards, including
// writes through files open at the time of the fork. The new VM has this
// VM's options and memory mounts (those mounted since too) and runs where
// this one does (the same engine process); host directory mounts are
// mounted again, so both VMs see the same host files; processes are not
// copied. Its cost grows with the number of files, not their size.
func (v *VM) Fork(ctx context.Context) (*VM, error) {
	if v.h == nil {
		return nil, fmt.Errorf("secexec: Fork: %w", errno.ENOSYS)
	}
	return v.h.newVM(ctx, v.opts, seed{parent: v})
}

// restartProcesses starts the snapshot's restart commands in v.
func (v *VM) restartProcesses(ctx context.Context, snap *Snapshot) error {
	for _, argv := range snap.Restart {
		p, err := v.Spawn(ctx, argv, &SpawnOptions{})
		if err != nil {
			return fmt.Errorf("secexec: restart %q: %w", argv, err)
		}
		_ = p.Stdin.Close()
		v.restartedMu.Lock()
		v.restarted = append(v.restarted, p)
		v.restartedMu.Unlock()
	}
	return nil
}

// Restarted returns the processes a VM restored from a snapshot started
// for its SnapshotOptions.Restart, in order.
func (v *VM) Restarted() []*Process {
	v.restartedMu.Lock()
	defer v.restartedMu.Unlock()
	return append([]*Process(nil), v.restarted...)
}

// forkBackend makes the backend of a fork of parent, where parent runs.
func (h *Host) forkBackend(ctx context.Context, opts Options, parent *VM) (backend, error) {
	b, ok := parent.b.(*apiBackend)
	if !ok {
		return nil, fmt.Errorf("secexec: Fork: %w", errno.ENOSYS)
	}
	if err := parent.b.err(); err != nil {
		return nil, err
	}
	switch api := b.api.(type) {
	case *vmhost.Host:
		cfg := hostConfig(opts, h.inProcessRuntime(opts))
		cfg.ForkOf = api
		child, err := vmhost.New(ctx, cfg)
		if err != nil {
			return nil, apiErr(err)
		}
		return newAPIBackend(child), nil
	case ownedVM:
		cfg := h.clientConfig(opts)
		cfg.ForkOf = api.VM
		api.ref.hold()
		child, err := api.Conn().NewVM(ctx, cfg)
		if err != nil {
			api.ref.release()
			return nil, apiErr(err)
		}
		return newAPIBackend(ownedVM{VM: child, ref: api.ref, once: new(sync.Once)}), nil
	case pooledVM:
		cfg := h.clientConfig(opts)
		cfg.ForkOf = api.VM
		release := h.engines.hold(api.Conn())
		if release == nil {
			return nil, fmt.Errorf("secexec: Fork: %w", ErrEngineLost)
		}
		child, err := api.Conn().NewVM(ctx, cfg)
		if err != nil {
			release()
			return nil, apiErr(err)
		}
		return newAPIBackend(pooledVM{VM: child, release: release}), nil
	}
	return nil, fmt.Errorf("secexec: Fork: %w", errno.ENOSYS)
}

// connRef counts the VMs of an engine process of their own (EnginePerVM
// and its forks): the engine ends with the last of them.
type connRef struct {
	mu sync.Mutex
	n  int
	c  *client.Conn
}

func (r *connRef) hold() {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
}

func (r *connRef) release() {
	r.mu.Lock()
	r.n--
	last := r.n == 0
	r.mu.Unlock()
	if last {
		_ = r.c.Close()
	}
}

// Options returns the options the snapshot's VM ran with that it keeps:
// Env, Cwd, Hostname, Clock, Permissions and Limits, and a memory Mount
// for each of its memory mounts. Options.From fills the fields a caller
// leaves unset from them.
func (s *Snapshot) Options() Options {
	m := s.meta
	opts := Options{Env: m.Env, Cwd: m.Cwd, Hostname: m.Hostname, Clock: m.Clock, Permissions: m.Permissions, Limits: m.Limits}
	for _, p := range s.mounts {
		opts.Mounts = append(opts.Mounts, Mount{Path: p})
	}
	return opts
}
