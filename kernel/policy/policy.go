package policy

import "strings"

// Effect is what a matching rule decides.
type Effect string

// The two effects. Anything else is rejected by Parse and Compile.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// FSOp is a filesystem operation a rule can name.
type FSOp string

// Filesystem operations. FSAll in a rule's Ops means every operation; it is
// not a valid argument to CheckFS.
const (
	FSRead     FSOp = "read"     // open for reading, readlink
	FSWrite    FSOp = "write"    // open for writing, create a file
	FSStat     FSOp = "stat"     // stat, lstat, access
	FSReaddir  FSOp = "readdir"  // list a directory
	FSMkdir    FSOp = "mkdir"    // create a directory
	FSRemove   FSOp = "remove"   // unlink, rmdir
	FSRename   FSOp = "rename"   // checked on both the old and the new path
	FSSymlink  FSOp = "symlink"  // checked on the new link's path
	FSLink     FSOp = "link"     // checked on the new link's path
	FSChmod    FSOp = "chmod"    // change mode bits
	FSChown    FSOp = "chown"    // change owner
	FSUtimes   FSOp = "utimes"   // change timestamps
	FSTruncate FSOp = "truncate" // change size
	FSMount    FSOp = "mount"    // mount or unmount at a path
	FSAll      FSOp = "*"        // every operation (rules only)
)

// fsOps lists the concrete operations in index order.
var fsOps = [...]FSOp{FSRead, FSWrite, FSStat, FSReaddir, FSMkdir, FSRemove, FSRename,
	FSSymlink, FSLink, FSChmod, FSChown, FSUtimes, FSTruncate, FSMount}

const numFSOps = len(fsOps)

// fsOpIndex maps an operation to its index; a switch keeps it
// allocation-free and faster than a map on the check path.
func fsOpIndex(op FSOp) (int, bool) {
	switch op {
	case FSRead:
		return 0, true
	case FSWrite:
		return 1, true
	case FSStat:
		return 2, true
	case FSReaddir:
		return 3, true
	case FSMkdir:
		return 4, true
	case FSRemove:
		return 5, true
	case FSRename:
		return 6, true
	case FSSymlink:
		return 7, true
	case FSLink:
		return 8, true
	case FSChmod:
		return 9, true
	case FSChown:
		return 10, true
	case FSUtimes:
		return 11, true
	case FSTruncate:
		return 12, true
	case FSMount:
		return 13, true
	}
	return 0, false
}

// AllFSOps returns every concrete filesystem operation (a fresh slice).
func AllFSOps() []FSOp { return append([]FSOp(nil), fsOps[:]...) }

// ReadOps returns the operations granted by AllowRead: read, stat and
// readdir (a fresh slice).
func ReadOps() []FSOp { return []FSOp{FSRead, FSStat, FSReaddir} }

// WriteOps returns the operations granted by AllowWrite: every operation
// that changes the filesystem except mount, which must be granted by name
// (a fresh slice).
func WriteOps() []FSOp {
	return []FSOp{FSWrite, FSMkdir, FSRemove, FSRename, FSSymlink, FSLink, FSChmod, FSChown,
		FSUtimes, FSTruncate}
}

// NetOp is a network operation a rule can name.
type NetOp string

// Network operations. NetAll in a rule's Ops means every operation; it is
// not a valid argument to CheckNet.
const (
	NetConnect NetOp = "connect" // open an outgoing connection or send a datagram
	NetListen  NetOp = "listen"  // bind and listen on a local address
	NetDNS     NetOp = "dns"     // resolve a name; the port is ignored
	NetAll     NetOp = "*"       // every operation (rules only)
)

const numNetOps = 3

func netOpIndex(op NetOp) (int, bool) {
	switch op {
	case NetConnect:
		return 0, true
	case NetListen:
		return 1, true
	case NetDNS:
		return 2, true
	}
	return 0, false
}

// Policy is the complete, serialisable permission set of a VM. A nil or
// empty domain denies everything in that domain. Rules are evaluated in
// order and the last matching rule wins; see the package documentation for
// the pattern language of each domain.
type Policy struct {
	FS    []FSRule   `json:"fs,omitempty"`
	Net   []NetRule  `json:"net,omitempty"`
	Exec  []ExecRule `json:"exec,omitempty"`  // child processes
	Env   []EnvRule  `json:"env,omitempty"`   // environment variables a guest may see
	Tools []ToolRule `json:"tools,omitempty"` // host tools (Go functions exposed to guests)
}

// FSRule applies Effect to the operations Ops (empty or "*" means all) on
// the absolute guest paths matching any of Paths.
type FSRule struct {
	Effect Effect   `json:"effect"`
	Ops    []FSOp   `json:"ops,omitempty"`
	Paths  []string `json:"paths"`
}

// NetRule applies Effect to the operations Ops (empty or "*" means all) on
// the endpoints matching any of Hosts, each "HOST[:PORT]".
type NetRule struct {
	Effect Effect   `json:"effect"`
	Ops    []NetOp  `json:"ops,omitempty"`
	Hosts  []string `json:"hosts"`
}

// ExecRule applies Effect to starting child processes whose command
// matches any of Commands: a name pattern (no '/') or an absolute path
// pattern.
type ExecRule struct {
	Effect   Effect   `json:"effect"`
	Commands []string `json:"commands"`
}

// EnvRule applies Effect to the environment variables whose key matches any
// of Keys.
type EnvRule struct {
	Effect Effect   `json:"effect"`
	Keys   []string `json:"keys"`
}

// ToolRule applies Effect to calls of the host tools whose name matches any
// of Names.
type ToolRule struct {
	Effect Effect   `json:"effect"`
	Names  []string `json:"names"`
}

// AllowAll returns a policy that allows every operation in every domain.
// It is meant for trusted code and tests.
func AllowAll() *Policy {
	return &Policy{
		FS:    []FSRule{{Effect: Allow, Paths: []string{"/**"}}},
		Net:   []NetRule{{Effect: Allow, Hosts: []string{"*"}}},
		Exec:  []ExecRule{{Effect: Allow, Commands: []string{"*"}}},
		Env:   []EnvRule{{Effect: Allow, Keys: []string{"*"}}},
		Tools: []ToolRule{{Effect: Allow, Names: []string{"*"}}},
	}
}

// DenyAll returns a policy with no rules, which denies everything. Rules
// appended to it are the only grants.
func DenyAll() *Policy { return &Policy{} }

// TreePattern turns a path given on a command line into the pattern a user
// means by it: the path itself and everything beneath it. A path whose last
// segment already holds a wildcard is returned unchanged, so
// "/data/*.csv" stays a glob. "/" becomes "/**". An empty path stays empty
// (and fails to compile) rather than growing into a grant of everything.
func TreePattern(path string) string {
	if path == "" {
		return ""
	}
	path = strings.TrimRight(path, "/")
	if path == "" {
		return "/**"
	}
	last := path[strings.LastIndexByte(path, '/')+1:]
	if hasGlobMeta(last) {
		return path
	}
	return path + "/**"
}

// AllowRead appends a rule allowing read, stat and readdir on each path
// and everything beneath it (see TreePattern), as the CLI's --allow-read
// does. With no paths it does nothing. It returns p for chaining.
func (p *Policy) AllowRead(paths ...string) *Policy {
	return p.addFS(Allow, ReadOps(), treePatterns(paths))
}

// AllowWrite appends a rule allowing the WriteOps on each path and
// everything beneath it (see TreePattern), as the CLI's --allow-write does.
// It grants no reading. It returns p for chaining.
func (p *Policy) AllowWrite(paths ...string) *Policy {
	return p.addFS(Allow, WriteOps(), treePatterns(paths))
}

// AllowFS appends a rule allowing ops (nil means all) on the path patterns,
// used verbatim. It returns p for chaining.
func (p *Policy) AllowFS(ops []FSOp, patterns ...string) *Policy {
	return p.addFS(Allow, ops, patterns)
}

// DenyFS appends a rule denying ops (nil means all) on the path patterns,
// used verbatim. It returns p for chaining.
func (p *Policy) DenyFS(ops []FSOp, patterns ...string) *Policy {
	return p.addFS(Deny, ops, patterns)
}

func (p *Policy) addFS(e Effect, ops []FSOp, patterns []string) *Policy {
	if len(patterns) > 0 {
		p.FS = append(p.FS, FSRule{Effect: e, Ops: append([]FSOp(nil), ops...),
			Paths: append([]string(nil), patterns...)})
	}
	return p
}

func treePatterns(paths []string) []string {
	out := make([]string, len(paths))
	for i, path := range paths {
		out[i] = TreePattern(path)
	}
	return out
}

// AllowNet appends a rule allowing every network operation on the
// HOST[:PORT] patterns, as the CLI's --allow-net does. It returns p.
func (p *Policy) AllowNet(hosts ...string) *Policy { return p.addNet(Allow, hosts) }

// DenyNet appends a rule denying every network operation on the
// HOST[:PORT] patterns. It returns p.
func (p *Policy) DenyNet(hosts ...string) *Policy { return p.addNet(Deny, hosts) }

func (p *Policy) addNet(e Effect, hosts []string) *Policy {
	if len(hosts) > 0 {
		p.Net = append(p.Net, NetRule{Effect: e, Hosts: append([]string(nil), hosts...)})
	}
	return p
}

// AllowExec appends a rule allowing the command patterns. It returns p.
func (p *Policy) AllowExec(commands ...string) *Policy { return p.addExec(Allow, commands) }

// DenyExec appends a rule denying the command patterns. It returns p.
func (p *Policy) DenyExec(commands ...string) *Policy { return p.addExec(Deny, commands) }

func (p *Policy) addExec(e Effect, commands []string) *Policy {
	if len(commands) > 0 {
		p.Exec = append(p.Exec, ExecRule{Effect: e, Commands: append([]string(nil), commands...)})
	}
	return p
}

// AllowEnv appends a rule allowing the env key patterns, as the CLI's
// --allow-env does. It returns p.
func (p *Policy) AllowEnv(keys ...string) *Policy { return p.addEnv(Allow, keys) }

// DenyEnv appends a rule denying the env key patterns. It returns p.
func (p *Policy) DenyEnv(keys ...string) *Policy { return p.addEnv(Deny, keys) }

func (p *Policy) addEnv(e Effect, keys []string) *Policy {
	if len(keys) > 0 {
		p.Env = append(p.Env, EnvRule{Effect: e, Keys: append([]string(nil), keys...)})
	}
	return p
}

// AllowTool appends a rule allowing the tool name patterns. It returns p.
func (p *Policy) AllowTool(names ...string) *Policy { return p.addTool(Allow, names) }

// DenyTool appends a rule denying the tool name patterns. It returns p.
func (p *Policy) DenyTool(names ...string) *Policy { return p.addTool(Deny, names) }

func (p *Policy) addTool(e Effect, names []string) *Policy {
	if len(names) > 0 {
		p.Tools = append(p.Tools, ToolRule{Effect: e, Names: append([]string(nil), names...)})
	}
	return p
}
