package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/secexec/secexec/kernel/policy"
)

// Limits are a VM's resource limits; zero fields take the server's
// defaults, and the server refuses values above its maximum.
type Limits struct {
	// FSBytes bounds the file data the VM stores.
	FSBytes int64
	// Processes bounds the processes running at once.
	Processes int
	// MemoryBytes bounds each process's memory; VMMemoryBytes all of
	// them together.
	MemoryBytes   int64
	VMMemoryBytes int64
	// CPUTime bounds each process's CPU time; VMCPUTime all of them
	// together.
	CPUTime   time.Duration
	VMCPUTime time.Duration
}

// Mount is a memory filesystem at Path (a server never mounts its own
// directories into a tenant's VM).
type Mount struct {
	Path     string
	ReadOnly bool
}

// VMOptions configure NewVM. The zero value is the server's standard
// VM: its own files and programs, no network, nothing of the host.
type VMOptions struct {
	// Permissions is the VM's policy (nil: the server's standard one).
	Permissions *policy.Policy
	Limits      Limits
	// Env and Cwd are the guest's environment and working directory.
	Env      map[string]string
	Cwd      string
	Hostname string
	// Clock is "coarse" (default), "real" or "frozen".
	Clock  string
	Mounts []Mount
	// IdleTimeout closes the VM after this long unused (the server's
	// default and maximum if zero or larger).
	IdleTimeout time.Duration
	// Engine is the VM's placement: "per-tenant" or "per-vm" (empty:
	// the server's default).
	Engine string
	// FromSnapshot starts the VM from one of the tenant's snapshots
	// (VM.Snapshot): its files, and its saved options for every field
	// left zero here.
	FromSnapshot string
	// Labels are key=value labels to find the VM by (FindVMs).
	Labels map[string]string
	// TTL closes the VM this long after its creation, whatever its
	// state (zero: no TTL; at most the server's maximum).
	TTL time.Duration
}

// VMInfo describes a VM on the server.
type VMInfo struct {
	ID          string
	CreatedAt   time.Time
	LastUsedAt  time.Time
	IdleTimeout time.Duration
	// Processes counts the spawned processes the server holds.
	Processes int
	Engine    string
	// State is "running", "paused" (saved and freed: the next call
	// that needs it resumes it) or "lost" when its engine process died
	// (LostReason says how).
	State      string
	LostReason string
	Labels     map[string]string
	// ExpiresAt is when its TTL ends (zero: no TTL).
	ExpiresAt time.Time
}

type vmJSON struct {
	ID            string            `json:"id"`
	CreatedAt     time.Time         `json:"created_at"`
	LastUsedAt    time.Time         `json:"last_used_at"`
	IdleTimeoutMS int64             `json:"idle_timeout_ms"`
	Processes     int               `json:"processes"`
	Engine        string            `json:"engine"`
	State         string            `json:"state"`
	LostReason    string            `json:"lost_reason,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	ExpiresAt     *time.Time        `json:"expires_at,omitempty"`
}

func (j *vmJSON) info() VMInfo {
	i := VMInfo{ID: j.ID, CreatedAt: j.CreatedAt, LastUsedAt: j.LastUsedAt,
		IdleTimeout: time.Duration(j.IdleTimeoutMS) * time.Millisecond, Processes: j.Processes,
		Engine: j.Engine, State: j.State, LostReason: j.LostReason, Labels: j.Labels}
	if j.ExpiresAt != nil {
		i.ExpiresAt = *j.ExpiresAt
	}
	return i
}

type createVMJSON struct {
	Permissions   *policy.Policy    `json:"permissions,omitempty"`
	Limits        *limitsJSON       `json:"limits,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	Hostname      string            `json:"hostname,omitempty"`
	Clock         string            `json:"clock,omitempty"`
	Mounts        []mountJSON       `json:"mounts,omitempty"`
	IdleTimeoutMS int64             `json:"idle_timeout_ms,omitempty"`
	Engine        string            `json:"engine,omitempty"`
	FromSnapshot  string            `json:"from_snapshot,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	TTLMS         int64             `json:"ttl_ms,omitempty"`
}

type limitsJSON struct {
	FSBytes       int64 `json:"fs_bytes,omitempty"`
	Processes     int   `json:"processes,omitempty"`
	MemoryBytes   int64 `json:"memory_bytes,omitempty"`
	CPUTimeMS     int64 `json:"cpu_time_ms,omitempty"`
	VMMemoryBytes int64 `json:"vm_memory_bytes,omitempty"`
	VMCPUTimeMS   int64 `json:"vm_cpu_time_ms,omitempty"`
}

type mountJSON struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// VM is a VM on the server. Its methods may be called concurrently.
type VM struct {
	c  *Client
	id string
	fs *FS
}

// NewVM creates a VM.
func (c *Client) NewVM(ctx context.Context, opts VMOptions) (*VM, error) {
	req := createVMJSON{Permissions: opts.Permissions, Env: opts.Env, Cwd: opts.Cwd, Hostname: opts.Hostname,
		Clock: opts.Clock, IdleTimeoutMS: opts.IdleTimeout.Milliseconds(), Engine: opts.Engine,
		FromSnapshot: opts.FromSnapshot, Labels: opts.Labels, TTLMS: opts.TTL.Milliseconds()}
	if l := opts.Limits; l != (Limits{}) {
		req.Limits = &limitsJSON{FSBytes: l.FSBytes, Processes: l.Processes, MemoryBytes: l.MemoryBytes,
			CPUTimeMS: l.CPUTime.Milliseconds(), VMMemoryBytes: l.VMMemoryBytes, VMCPUTimeMS: l.VMCPUTime.Milliseconds()}
	}
	for _, m := range opts.Mounts {
		req.Mounts = append(req.Mounts, mountJSON(m))
	}
	cl, err := jsonCall("POST", "/v1/vms", req)
	if err != nil {
		return nil, err
	}
	var j vmJSON
	if err := c.doJSON(ctx, cl, &j); err != nil {
		return nil, err
	}
	return c.VM(j.ID), nil
}

// VM returns the VM with the given id, without asking the server: a
// call on a VM that does not exist (or is another tenant's) fails with
// ErrNotFound. Use Info to check.
func (c *Client) VM(id string) *VM {
	v := &VM{c: c, id: id}
	v.fs = &FS{vm: v}
	return v
}

// ListVMs lists the tenant's VMs.
func (c *Client) ListVMs(ctx context.Context) ([]VMInfo, error) {
	return c.FindVMs(ctx, VMFilter{})
}

// VMFilter selects VMs in FindVMs.
type VMFilter struct {
	// Labels the VMs must all have, with these values.
	Labels map[string]string
	// State is "running", "paused" or "lost"; empty: any.
	State string
}

// FindVMs lists the tenant's VMs that match f.
func (c *Client) FindVMs(ctx context.Context, f VMFilter) ([]VMInfo, error) {
	q := url.Values{}
	for k, v := range f.Labels {
		q.Add("label", k+"="+v)
	}
	if f.State != "" {
		q.Set("state", f.State)
	}
	var out struct {
		VMs []vmJSON `json:"vms"`
	}
	if err := c.doJSON(ctx, &call{method: "GET", path: "/v1/vms", query: q}, &out); err != nil {
		return nil, err
	}
	infos := make([]VMInfo, len(out.VMs))
	for i := range out.VMs {
		infos[i] = out.VMs[i].info()
	}
	return infos, nil
}

// ID returns the VM's id.
func (v *VM) ID() string { return v.id }

// path is the escaped path of the VM's route below /v1/vms/{id}.
func (v *VM) path(sub string) string { return "/v1/vms/" + url.PathEscape(v.id) + sub }

// Info asks the server about the VM.
func (v *VM) Info(ctx context.Context) (VMInfo, error) {
	var j vmJSON
	if err := v.c.doJSON(ctx, &call{method: "GET", path: v.path("")}, &j); err != nil {
		return VMInfo{}, err
	}
	return j.info(), nil
}

// closeTimeout bounds Close, which has no context of its own.
const closeTimeout = 30 * time.Second

// Close deletes the VM on the server, ending its processes.
func (v *VM) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return v.Delete(ctx)
}

// Delete deletes the VM on the server, as Close does, within ctx.
func (v *VM) Delete(ctx context.Context) error {
	if err := v.c.doJSON(ctx, &call{method: "DELETE", path: v.path("")}, nil); err != nil {
		return fmt.Errorf("client: deleting VM %s: %w", v.id, err)
	}
	return nil
}

// FS returns the VM's filesystem.
func (v *VM) FS() *FS { return v.fs }

// JS returns the VM's JavaScript runtime.
func (v *VM) JS() *JS { return &JS{vm: v} }

// decode is json.Unmarshal with the client's error wording.
func decode(data []byte, v any, what string) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("client: decoding %s: %w", what, err)
	}
	return nil
}
