package mcpserver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/policy"
)

// The most a client may list in vm_create's path lists, and its
// environment's size.
const (
	maxPathRules = 64
	maxEnvVars   = 256
)

// defaultMemory is the per-process guest memory a VM gets when the
// operator sets none (the engine's V8 heap and WebAssembly defaults).
const defaultMemory = 128 << 20

type vmCreateIn struct {
	FSBytes       int64             `json:"fs_bytes,omitempty" jsonschema:"file data the VM may store, in bytes; at most the server's limit (the default)"`
	MemoryBytes   int64             `json:"memory_bytes,omitempty" jsonschema:"guest memory per process, in bytes; at most the server's limit (the default)"`
	Processes     int               `json:"processes,omitempty" jsonschema:"processes the VM may run at once; at most the server's limit (the default)"`
	CPUTimeMS     int64             `json:"cpu_time_ms,omitempty" jsonschema:"CPU time per process in milliseconds; at most the server's limit (the default)"`
	DenyPaths     []string          `json:"deny_paths,omitempty" jsonschema:"absolute guest paths the VM's programs may not touch at all (each with everything beneath it)"`
	ReadOnlyPaths []string          `json:"read_only_paths,omitempty" jsonschema:"absolute guest paths the VM's programs may read but not change"`
	NoNetwork     bool              `json:"no_network,omitempty" jsonschema:"refuse outgoing connections and DNS even where the server would allow them"`
	Env           map[string]string `json:"env,omitempty" jsonschema:"environment variables every process of the VM starts with"`
	Cwd           string            `json:"cwd,omitempty" jsonschema:"default working directory (an absolute guest path)"`
}

type limitsOut struct {
	FSBytes     int64 `json:"fs_bytes"`
	MemoryBytes int64 `json:"memory_bytes"`
	Processes   int   `json:"processes"`
	CPUTimeMS   int64 `json:"cpu_time_ms,omitempty"`
}

type vmCreateOut struct {
	VMID   string    `json:"vm_id"`
	Limits limitsOut `json:"limits"`
}

type vmIDIn struct {
	VMID string `json:"vm_id" jsonschema:"the id vm_create returned"`
}

type vmCloseOut struct {
	Closed bool `json:"closed"`
}

type vmInfo struct {
	VMID     string        `json:"vm_id"`
	Created  time.Time     `json:"created"`
	Previews []previewInfo `json:"previews,omitempty"`
}

type previewInfo struct {
	Port int    `json:"port"`
	URL  string `json:"url"`
}

type vmListOut struct {
	VMs []vmInfo `json:"vms"`
}

type previewIn struct {
	VMID string `json:"vm_id" jsonschema:"the id vm_create returned"`
	Port int    `json:"port" jsonschema:"the guest TCP port a server in the VM listens on"`
}

// addTools registers every tool.
func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "vm_create", Title: "Create a VM",
		Description: "Create a sandbox VM: its own filesystem (a writable /workspace), processes and permissions. Limits and permissions may only be narrowed from the server's. Returns the vm_id the other tools take."},
		s.vmCreate)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "vm_close", Title: "Close a VM",
		Description: "Close a VM: kill its processes, drop its files and unpublish its previews."},
		s.vmClose)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "vm_list", Title: "List VMs",
		Description: "List this session's VMs and their previews.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		s.vmList)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "exec", Title: "Run a command",
		Description: "Run a shell command line (or an argv) in a VM and wait for it. Returns exit_code, stdout and stderr (bounded; truncation is reported). Streams output as progress notifications when the request has a progress token."},
		s.exec)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "file_read", Title: "Read a file",
		Description: "Read a file of a VM (bounded; use offset and length for large files). Returns text, or base64 for binary content.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		s.fileRead)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "file_write", Title: "Write a file",
		Description: "Write a file of a VM, creating or replacing it (text or base64 content)."},
		s.fileWrite)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "file_list", Title: "List a directory",
		Description: "List a directory of a VM: names, types and sizes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		s.fileList)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "js_eval", Title: "Evaluate JavaScript",
		Description: "Evaluate a JavaScript expression with node in a VM (awaited if it is a promise) and return its value as JSON."},
		s.jsEval)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "preview", Title: "Open a preview",
		Description: "Publish a TCP port a server in the VM listens on at a loopback URL on the host; it is unpublished when the VM closes."},
		s.preview)
}

func (s *Server) vmCreate(ctx context.Context, req *mcp.CallToolRequest, in vmCreateIn) (*mcp.CallToolResult, vmCreateOut, error) {
	var out vmCreateOut
	opts, err := s.narrow(in)
	if err != nil {
		return nil, out, err
	}
	// A policy that does not compile is the client's doing (its
	// deny_paths): say so before any VM is made.
	if _, err := policy.Compile(opts.Permissions); err != nil {
		return nil, out, fmt.Errorf("%w: %w", ErrBadArgument, err)
	}
	sess, err := s.reserve(req.Session)
	if err != nil {
		return nil, out, err
	}
	opts.EngineGroup = sess.group
	vm, err := secexec.NewVM(ctx, opts)
	if err != nil {
		s.settle(req.Session, sess, nil)
		return nil, out, fmt.Errorf("vm_create: %w", err)
	}
	e := &vmEntry{id: "vm-" + strings.ToLower(rand.Text()[:12]), vm: vm, cwd: cmp.Or(opts.Cwd, secexec.Workspace), created: time.Now()}
	if !s.settle(req.Session, sess, e) {
		_ = vm.Close()
		return nil, out, ErrClosed
	}
	s.cfg.Logger.Info("mcp: vm created", "vm", e.id)
	out = vmCreateOut{VMID: e.id, Limits: limitsOut{FSBytes: opts.Limits.FSBytes, MemoryBytes: opts.Limits.MemoryBytes,
		Processes: opts.Limits.Processes, CPUTimeMS: opts.Limits.CPUTime.Milliseconds()}}
	return nil, out, nil
}

// narrow returns the VM options for a vm_create: the operator's, narrowed
// as the client asks. Whatever the client sends, the result allows no
// more than the operator's options: limits may only go down, and the
// permission rules it adds are denials appended after the operator's
// (the last matching rule wins).
func (s *Server) narrow(in vmCreateIn) (secexec.Options, error) {
	opts := s.cfg.Base
	opts.Mounts = slices.Clone(opts.Mounts)
	opts.Logger = s.cfg.Logger
	def := secexec.DefaultLimits()
	lim := &opts.Limits
	if err := narrowInt(&lim.FSBytes, def.FSBytes, in.FSBytes, "fs_bytes"); err != nil {
		return opts, err
	}
	if err := narrowInt(&lim.MemoryBytes, defaultMemory, in.MemoryBytes, "memory_bytes"); err != nil {
		return opts, err
	}
	procs := int64(lim.Processes)
	if err := narrowInt(&procs, int64(def.Processes), int64(in.Processes), "processes"); err != nil {
		return opts, err
	}
	lim.Processes = int(procs)
	cpu := lim.CPUTime.Milliseconds()
	if err := narrowInt(&cpu, 0, in.CPUTimeMS, "cpu_time_ms"); err != nil {
		return opts, err
	}
	lim.CPUTime = time.Duration(cpu) * time.Millisecond

	p, err := clonePolicy(s.base)
	if err != nil {
		return opts, err
	}
	if len(in.DenyPaths)+len(in.ReadOnlyPaths) > maxPathRules {
		return opts, fmt.Errorf("%w: at most %d deny_paths and read_only_paths", ErrBadArgument, maxPathRules)
	}
	for _, list := range []struct {
		name  string
		paths []string
		ops   []policy.FSOp
	}{{"deny_paths", in.DenyPaths, policy.AllFSOps()}, {"read_only_paths", in.ReadOnlyPaths, policy.WriteOps()}} {
		for _, path := range list.paths {
			if !strings.HasPrefix(path, "/") {
				return opts, fmt.Errorf("%w: %s: %q is not an absolute guest path", ErrBadArgument, list.name, printable(path))
			}
			p.DenyFS(list.ops, policy.TreePattern(path))
		}
	}
	if in.NoNetwork {
		p.Net = append(p.Net, policy.NetRule{Effect: policy.Deny, Ops: []policy.NetOp{policy.NetConnect, policy.NetDNS}, Hosts: []string{"*"}})
	}
	if err := p.Validate(); err != nil {
		return opts, fmt.Errorf("%w: %w", ErrBadArgument, err)
	}
	opts.Permissions = p

	size, err := envSize(in.Env)
	if err != nil {
		return opts, err
	}
	if err := s.inputSize("env", size); err != nil {
		return opts, err
	}
	env := maps.Clone(opts.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, in.Env)
	opts.Env = env
	if in.Cwd != "" {
		if !strings.HasPrefix(in.Cwd, "/") {
			return opts, fmt.Errorf("%w: cwd %q is not an absolute guest path", ErrBadArgument, printable(in.Cwd))
		}
		opts.Cwd = in.Cwd
	}
	return opts, nil
}

// narrowInt sets *cur (the operator's value; 0 means def, and a def of 0
// means unlimited) to want if want is no more than it.
func narrowInt(cur *int64, def, want int64, name string) error {
	limit := *cur
	if limit == 0 {
		limit = def
	}
	switch {
	case want < 0:
		return fmt.Errorf("%w: %s %d is negative", ErrBadArgument, name, want)
	case want == 0:
		*cur = limit
	case limit != 0 && want > limit:
		return fmt.Errorf("%s %d: %w of %d", name, want, ErrWiderThanServer, limit)
	default:
		*cur = want
	}
	return nil
}

// clonePolicy copies p through its serialised form, so the client's rules
// never reach the operator's.
func clonePolicy(p *policy.Policy) (*policy.Policy, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("copying the server's policy: %w", err)
	}
	return policy.Parse(data)
}

func (s *Server) vmClose(_ context.Context, req *mcp.CallToolRequest, in vmIDIn) (*mcp.CallToolResult, vmCloseOut, error) {
	e, err := s.remove(req.Session, in.VMID)
	if err != nil {
		return nil, vmCloseOut{}, err
	}
	e.close()
	s.cfg.Logger.Info("mcp: vm closed", "vm", e.id)
	return nil, vmCloseOut{Closed: true}, nil
}

func (s *Server) vmList(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, vmListOut, error) {
	out := vmListOut{VMs: []vmInfo{}}
	for _, e := range s.list(req.Session) {
		out.VMs = append(out.VMs, vmInfo{VMID: e.id, Created: e.created, Previews: e.previewInfos()})
	}
	slices.SortFunc(out.VMs, func(a, b vmInfo) int { return a.Created.Compare(b.Created) })
	return nil, out, nil
}

func (e *vmEntry) previewInfos() []previewInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []previewInfo
	for _, p := range e.previews {
		out = append(out, previewInfo{Port: p.port, URL: p.url})
	}
	return out
}

func (s *Server) preview(ctx context.Context, req *mcp.CallToolRequest, in previewIn) (*mcp.CallToolResult, previewInfo, error) {
	if s.cfg.Publish == nil {
		return nil, previewInfo{}, ErrNoPreview
	}
	if in.Port <= 0 || in.Port > 65535 {
		return nil, previewInfo{}, fmt.Errorf("%w: port %d is not a TCP port", ErrBadArgument, in.Port)
	}
	e, release, err := s.acquire(req.Session, in.VMID)
	if err != nil {
		return nil, previewInfo{}, err
	}
	defer release()
	// One lock across publishing: two calls for one port share a URL, and
	// the count cannot be overrun by concurrent calls.
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, previewInfo{}, fmt.Errorf("vm_id %q: %w", printable(in.VMID), ErrUnknownVM)
	}
	for _, p := range e.previews {
		if p.port == in.Port {
			return nil, previewInfo{Port: p.port, URL: p.url}, nil
		}
	}
	if len(e.previews) >= s.cfg.MaxPreviewsPerVM {
		return nil, previewInfo{}, fmt.Errorf("%w: a VM may publish at most %d ports", ErrBadArgument, s.cfg.MaxPreviewsPerVM)
	}
	// The listener outlives this call: it ends with the VM.
	url, stop, err := s.cfg.Publish(context.WithoutCancel(ctx), e.vm, in.Port)
	if err != nil {
		return nil, previewInfo{}, fmt.Errorf("preview: %w", err)
	}
	e.previews = append(e.previews, preview{port: in.Port, url: url, stop: stop})
	return nil, previewInfo{Port: in.Port, URL: url}, nil
}

// envSize checks a client's environment variables and returns their
// size as the kernel counts it (KEY=VALUE and a NUL each).
func envSize(env map[string]string) (int, error) {
	if len(env) > maxEnvVars {
		return 0, fmt.Errorf("%w: env: at most %d variables", ErrBadArgument, maxEnvVars)
	}
	size := 0
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return 0, fmt.Errorf("%w: env: %q is not a valid variable", ErrBadArgument, printable(k))
		}
		size += len(k) + len(v) + 2
	}
	return size, nil
}
