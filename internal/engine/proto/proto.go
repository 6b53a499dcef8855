// Package proto is the wire protocol between a secexec client (the SDK in
// the embedding program) and an engine process: length-prefixed frames
// with CBOR bodies. docs/protocol.md is the normative description; this
// package is its only implementation, used by both ends.
//
// The decoder is strict (unknown message types, unknown fields, duplicate
// keys, indefinite lengths, tags and trailing bytes are errors) and bounded
// (MaxFrame), because each end must survive a hostile peer: the engine a
// buggy client, and — more importantly — the client an engine that guest
// code may have taken over.
package proto

import (
	"fmt"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/clock"
)

// Version is the protocol version this package speaks. Hello and Welcome
// carry it; a peer with another version is refused.
const Version = 5

// Frame and stream limits of the protocol.
const (
	// MaxFrame bounds a frame's length field: the type byte, the id and
	// the CBOR body. A peer that announces more is disconnected.
	MaxFrame = 16 << 20
	// HeaderSize is the fixed part of a frame: a 4-byte big-endian length,
	// a type byte and an 8-byte big-endian id.
	HeaderSize = 4 + 1 + 8
	// MaxChunk bounds the bytes of one Data message.
	MaxChunk = 1 << 20
	// Window is the initial credit of every flow-controlled stream: the
	// bytes a sender may send before the receiver grants more.
	Window = 256 << 10
	// TokenSize is the length of the authentication token.
	TokenSize = 32
)

// How an engine process is started (see client.Start): EnvMode marks the
// process as an engine (the engine removes it from its environment before
// serving), the engine's end of the socket pair is descriptor EngineFD,
// and its one-time token (TokenSize bytes) is read once from descriptor
// TokenFD, the read end of a pipe the client wrote it into and closed.
// The token is never in the environment: os.Unsetenv leaves the original
// block, and so /proc/PID/environ, unchanged.
const (
	EnvMode = "SECEXEC_ENGINE"
	// ModeValue is EnvMode's value; it names the protocol version, so an
	// engine binary of another version refuses to serve.
	ModeValue = "proto5"
	EngineFD  = 3
	TokenFD   = 4
	// EnvLogLevel carries the client's log level (slog's names: DEBUG,
	// INFO, WARN, ERROR). The engine writes its log records at that level
	// and above to its stderr as JSON lines (LogRecord's form), which the
	// client passes on to its own logger.
	EnvLogLevel = "SECEXEC_LOG_LEVEL"
)

// Type identifies a message.
type Type uint8

// Message types. 1–31 are control and stream messages, 32 and above are
// requests, each answered by exactly one Response with the same id.
const (
	THello    Type = 1  // client → engine, first frame: version and token
	TWelcome  Type = 2  // engine → client: the hello was accepted
	TFatal    Type = 3  // either way: the sender closes the connection
	TResponse Type = 4  // engine → client: the answer to request id
	TCancel   Type = 5  // client → engine: cancel request id
	TData     Type = 6  // either way: bytes of stream (id, fd)
	TCredit   Type = 7  // either way: more credit for stream (id, fd)
	TClose    Type = 8  // either way: the receiver of stream (id, fd) stopped reading
	TExit     Type = 9  // engine → client: spawned process id exited
	TVMEvent  Type = 10 // engine → client: VM id changed state
	TAudit    Type = 11 // engine → client: a permission decision in VM id
	// TToolCall asks the client to run a host tool; TToolResult answers
	// it. They are requests the other way round: the id is the
	// engine's, in a space of its own.
	TToolCall   Type = 12 // engine → client
	TToolResult Type = 13 // client → engine

	TCreateVM  Type = 32
	TCloseVM   Type = 33
	TReadFile  Type = 34
	TWriteFile Type = 35
	TMkdir     Type = 36
	TMkdirAll  Type = 37
	TReadDir   Type = 38
	TStat      Type = 39
	TLstat     Type = 40
	TRemove    Type = 41
	TRemoveAll Type = 42
	TRename    Type = 43
	TSymlink   Type = 44
	TReadlink  Type = 45
	TChmod     Type = 46
	TMount     Type = 47
	TUnmount   Type = 48
	TRun       Type = 49
	TSpawn     Type = 50
	TSignal    Type = 51
	TMetrics   Type = 52
	TDial      Type = 53
	// Persistent JavaScript contexts.
	TNewContext   Type = 54
	TEvaluate     Type = 55
	TCloseContext Type = 56
	TResize       Type = 57 // version 3
	TWatch        Type = 60 // version 4
	// TSnapshot saves a VM's memory layers to a snapshot store the
	// engine writes itself (version 4).
	TSnapshot Type = 58
)

var typeNames = map[Type]string{
	THello: "Hello", TWelcome: "Welcome", TFatal: "Fatal", TResponse: "Response", TCancel: "Cancel",
	TData: "Data", TCredit: "Credit", TClose: "Close", TExit: "Exit", TVMEvent: "VMEvent", TAudit: "Audit",
	TCreateVM: "CreateVM", TCloseVM: "CloseVM", TReadFile: "ReadFile", TWriteFile: "WriteFile",
	TMkdir: "Mkdir", TMkdirAll: "MkdirAll", TReadDir: "ReadDir", TStat: "Stat", TLstat: "Lstat",
	TRemove: "Remove", TRemoveAll: "RemoveAll", TRename: "Rename", TSymlink: "Symlink",
	TReadlink: "Readlink", TChmod: "Chmod", TMount: "Mount", TUnmount: "Unmount", TRun: "Run",
	TSpawn: "Spawn", TSignal: "Signal", TMetrics: "Metrics", TDial: "Dial",
	TToolCall: "ToolCall", TToolResult: "ToolResult", TNewContext: "NewContext", TEvaluate: "Evaluate",
	TCloseContext: "CloseContext", TResize: "Resize", TWatch: "Watch", TSnapshot: "Snapshot",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// IsRequest reports whether t is a request type, answered by a Response.
func (t Type) IsRequest() bool { return t >= TCreateVM && t <= TSnapshot || t == TWatch }

// Stream numbers: the fd of a Data, Credit or Close message.
const (
	FdStdin  = 0 // client → engine, flow-controlled
	FdStdout = 1 // engine → client, flow-controlled
	FdStderr = 2 // engine → client, flow-controlled
	FdFile   = 3 // file contents of ReadFile/WriteFile, bounded by the request instead
)

// Hello is the client's first frame. The token is the one the engine was
// started with; the engine answers Welcome or Fatal.
type Hello struct {
	Version uint16 `cbor:"1,keyasint"`
	Token   []byte `cbor:"2,keyasint"`
}

// Welcome accepts a Hello.
type Welcome struct {
	Version uint16 `cbor:"1,keyasint"`
	PID     int    `cbor:"2,keyasint,omitempty"`
}

// Fatal is the last frame a peer sends before closing the connection.
type Fatal struct {
	Err Error `cbor:"1,keyasint"`
}

// Cancel asks the engine to cancel request id (carried in the header).
// The request still gets its Response.
type Cancel struct{}

// Data carries bytes of stream (id, Fd). EOF marks the end of the
// stream; a Data with EOF may carry bytes too.
type Data struct {
	Fd    uint8  `cbor:"1,keyasint"`
	Bytes []byte `cbor:"2,keyasint,omitempty"`
	EOF   bool   `cbor:"3,keyasint,omitempty"`
}

// Credit lets the sender of stream (id, Fd) send N more bytes.
type Credit struct {
	Fd uint8  `cbor:"1,keyasint"`
	N  uint32 `cbor:"2,keyasint"`
}

// Close tells the sender of stream (id, Fd) that the receiver stopped
// reading it; Err says why (nil: the reader closed it on purpose).
type Close struct {
	Fd  uint8  `cbor:"1,keyasint"`
	Err *Error `cbor:"2,keyasint,omitempty"`
}

// Exit is how a process ended. It is the Exit event of a spawned process
// and the result of Run.
type Exit struct {
	Code     int    `cbor:"1,keyasint"`
	Signal   string `cbor:"2,keyasint,omitempty"`
	Outcome  string `cbor:"3,keyasint,omitempty"`
	Duration int64  `cbor:"4,keyasint,omitempty"` // nanoseconds
	// Note is text the host side adds to stderr after the program's own
	// output: a spawn failure or the time-limit message.
	Note []byte `cbor:"5,keyasint,omitempty"`
	// Reason says which limit ended a timed_out Run: "timeout" (wall
	// clock) or "cpu_time".
	Reason string `cbor:"6,keyasint,omitempty"`
}

// VM events.
const (
	VMClosed = "closed" // the VM was closed; its id is no longer valid
)

// VMEvent reports a change of VM id's state.
type VMEvent struct {
	Event  string `cbor:"1,keyasint"`
	Reason string `cbor:"2,keyasint,omitempty"`
}

// Audit is a permission decision in VM id (see policy.Event).
type Audit struct {
	Time    int64  `cbor:"1,keyasint"` // Unix nanoseconds
	Domain  string `cbor:"2,keyasint"`
	Op      string `cbor:"3,keyasint,omitempty"`
	Target  string `cbor:"4,keyasint,omitempty"`
	Allowed bool   `cbor:"5,keyasint,omitempty"`
	Rule    int    `cbor:"6,keyasint"`
	To      string `cbor:"7,keyasint,omitempty"` // a refused link's or rename's new name
}

// Mount is a filesystem to mount (see vm.Mount).
type Mount struct {
	Path     string `cbor:"1,keyasint"`
	HostDir  string `cbor:"2,keyasint,omitempty"`
	ReadOnly bool   `cbor:"3,keyasint,omitempty"`
	// MaxBytes and AllowExternalSymlinks: see vm.Mount.
	MaxBytes              int64 `cbor:"4,keyasint,omitempty"`
	AllowExternalSymlinks bool  `cbor:"5,keyasint,omitempty"`
}

// CreateVM creates a VM owned by the connection. Permissions is the
// policy as JSON (kernel/policy's format, parsed strictly by the engine);
// empty denies everything.
type CreateVM struct {
	Permissions []byte        `cbor:"1,keyasint,omitempty"`
	Limits      kernel.Limits `cbor:"2,keyasint"`
	Mounts      []Mount       `cbor:"3,keyasint,omitempty"`
	Cwd         string        `cbor:"4,keyasint,omitempty"`
	Hostname    string        `cbor:"5,keyasint,omitempty"`
	Audit       bool          `cbor:"6,keyasint,omitempty"`
	// 7 was RealTime, replaced by Clock.
	// Tools names the host tools the client runs for this VM's guests
	// (ToolCall).
	Tools []string `cbor:"8,keyasint,omitempty"`
	// Clock is the policy of the VM's clock (kernel/clock: 0 coarse,
	// 1 real, 2 frozen); the engine refuses any other value.
	Clock clock.Policy `cbor:"9,keyasint,omitempty"`
	// FromStore and FromID name a snapshot (a store location: a
	// directory or an s3:// URL; and a manifest id) whose memory layers
	// the VM starts with.
	FromStore string `cbor:"10,keyasint,omitempty"`
	FromID    string `cbor:"11,keyasint,omitempty"`
	// ForkOf is a VM of the same connection whose memory layers the VM
	// starts with, shared copy-on-write.
	ForkOf uint64 `cbor:"12,keyasint,omitempty"`
	// FromAuth authenticates the engine to an S3 FromStore (version 5).
	FromAuth *StoreAuth `cbor:"13,keyasint,omitempty"`
}

// StoreAuth are the credentials of an S3 snapshot store (version 5).
// They cross the protocol rather than the engine's argv or environment,
// which other processes of the host can read.
type StoreAuth struct {
	AccessKeyID     string `cbor:"1,keyasint,omitempty"`
	SecretAccessKey string `cbor:"2,keyasint,omitempty"`
	SessionToken    string `cbor:"3,keyasint,omitempty"`
}

// String keeps the credentials out of logs and error texts.
func (a *StoreAuth) String() string { return "StoreAuth{redacted}" }

// GoString keeps the credentials out of %#v.
func (a *StoreAuth) GoString() string { return a.String() }

// Snapshot asks the engine to save VM's memory layers to the store at
// Store (a directory, or an s3:// URL authenticated by Auth: version 5),
// with Meta (at most snapshot.MaxMeta bytes) in the manifest. The
// Response's Data is the manifest's summary as JSON (no entries).
type Snapshot struct {
	VM    uint64     `cbor:"1,keyasint"`
	Store string     `cbor:"2,keyasint"`
	Meta  []byte     `cbor:"3,keyasint,omitempty"`
	Auth  *StoreAuth `cbor:"4,keyasint,omitempty"`
}

// VMRef names the VM a request acts on (CloseVM).
type VMRef struct {
	VM uint64 `cbor:"1,keyasint"`
}

// PathOp is the body of the requests that act on one path: ReadFile
// (Limit), Mkdir, MkdirAll and Chmod (Mode), ReadDir, Stat, Lstat,
// Remove, RemoveAll, Readlink and Unmount.
//
// A ReadFile with Chunk set reads one piece of a regular file: at most
// Limit bytes (and at most MaxChunk) at Offset, answered inline in the
// Response (vmhost.Host.ReadAt).
//
// With Guest set, the operation acts as the VM's guest user under the
// VM's policy (vmhost.Host.Guest) instead of as the host; Unmount refuses
// it.
type PathOp struct {
	VM     uint64 `cbor:"1,keyasint"`
	Name   string `cbor:"2,keyasint"`
	Mode   uint32 `cbor:"3,keyasint,omitempty"`
	Limit  int64  `cbor:"4,keyasint,omitempty"`
	Offset int64  `cbor:"5,keyasint,omitempty"`
	Chunk  bool   `cbor:"6,keyasint,omitempty"`
	Guest  bool   `cbor:"7,keyasint,omitempty"`
}

// TwoPaths is the body of Rename (Old → New) and Symlink (a link New
// pointing to Old); Guest as in PathOp.
type TwoPaths struct {
	VM    uint64 `cbor:"1,keyasint"`
	Old   string `cbor:"2,keyasint"`
	New   string `cbor:"3,keyasint"`
	Guest bool   `cbor:"4,keyasint,omitempty"`
}

// WriteFile writes Size bytes to Name: Data, then (if Size is larger) the
// rest as Data messages on stream (id, FdFile).
//
// With At set, Data (all of it: Size equals its length) is written into
// the existing file at Offset without truncating it (vmhost.Host.WriteAt),
// so a file is streamed in pieces. Guest as in PathOp.
type WriteFile struct {
	VM     uint64 `cbor:"1,keyasint"`
	Name   string `cbor:"2,keyasint"`
	Perm   uint32 `cbor:"3,keyasint"`
	Size   int64  `cbor:"4,keyasint"`
	Data   []byte `cbor:"5,keyasint,omitempty"`
	Offset int64  `cbor:"6,keyasint,omitempty"`
	At     bool   `cbor:"7,keyasint,omitempty"`
	Guest  bool   `cbor:"8,keyasint,omitempty"`
}

// MountReq mounts a filesystem into VM.
type MountReq struct {
	VM    uint64 `cbor:"1,keyasint"`
	Mount Mount  `cbor:"2,keyasint"`
}

// Run runs Argv and waits: its output streams come as Data on (id,
// FdStdout) and (id, FdStderr); the Response ends both.
// With Stdin, the client sends the input on (id, FdStdin); without, the
// program reads /dev/null.
type Run struct {
	VM      uint64   `cbor:"1,keyasint"`
	Argv    []string `cbor:"2,keyasint"`
	Env     []string `cbor:"3,keyasint,omitempty"`
	Cwd     string   `cbor:"4,keyasint,omitempty"`
	Timeout int64    `cbor:"5,keyasint,omitempty"` // nanoseconds; 0: none
	Stdin   bool     `cbor:"6,keyasint,omitempty"`
}

// Spawn starts Argv; the request id becomes the process's id for its
// streams (as Run's), Signal and the Exit event.
type Spawn struct {
	VM   uint64   `cbor:"1,keyasint"`
	Argv []string `cbor:"2,keyasint"`
	Env  []string `cbor:"3,keyasint,omitempty"`
	Cwd  string   `cbor:"4,keyasint,omitempty"`
	// PTY (version 3), when set, runs the program on a new terminal of
	// this size: stream FdStdin carries keys to the terminal's master,
	// FdStdout the screen output, and FdStderr only its end.
	PTY *Winsize `cbor:"5,keyasint,omitempty"`
}

// Winsize is a terminal's size in characters.
type Winsize struct {
	Rows uint16 `cbor:"1,keyasint"`
	Cols uint16 `cbor:"2,keyasint"`
}

// Resize (version 3) sets the window size of the terminal of the process
// spawned by request Proc; its foreground job gets SIGWINCH. A process
// without a terminal answers ENOTTY.
type Resize struct {
	Proc uint64 `cbor:"1,keyasint"`
	Rows uint16 `cbor:"2,keyasint"`
	Cols uint16 `cbor:"3,keyasint"`
}

// Signal sends Sig to the process spawned by request Proc.
type Signal struct {
	Proc uint64 `cbor:"1,keyasint"`
	Sig  int    `cbor:"2,keyasint"`
}

// Dial connects to a guest's TCP listener on Port. The connection is a
// process without a program: the request id names it, its fd 0 stream
// carries bytes to the guest (the stream's end half-closes), fd 1 the
// guest's bytes, Signal closes it, and the Exit event says the guest's
// side ended. No policy applies: the embedder owns the VM.
type Dial struct {
	VM   uint64 `cbor:"1,keyasint"`
	Port uint16 `cbor:"2,keyasint"`
}

// Watch watches Path (with Recursive, the tree below it) in the VM for
// the embedder. Like Dial, it is a process without a program: fd 1
// carries the events as struct inotify_event records (names relative to
// Path), fd 0 is unused, and Signal ends the watch. Guest as in PathOp.
type Watch struct {
	VM        uint64 `cbor:"1,keyasint"`
	Path      string `cbor:"2,keyasint"`
	Recursive bool   `cbor:"3,keyasint"`
	Guest     bool   `cbor:"4,keyasint,omitempty"`
}

// Metrics asks for the engine's metrics: the Response carries them in
// Data, in the Prometheus text exposition format (version 0.0.4), at
// most MaxChunk bytes. The request acts on no VM.
type Metrics struct{}

// DirEntry is one entry of a ReadDir response.
type DirEntry struct {
	Name string `cbor:"1,keyasint"`
	Type uint32 `cbor:"2,keyasint"` // the S_IFMT bits
}

// Stat is a file's attributes; times are Unix nanoseconds.
type Stat struct {
	Mode  uint32 `cbor:"1,keyasint"`
	Ino   uint64 `cbor:"2,keyasint,omitempty"`
	Nlink uint32 `cbor:"3,keyasint,omitempty"`
	UID   uint32 `cbor:"4,keyasint,omitempty"`
	GID   uint32 `cbor:"5,keyasint,omitempty"`
	Size  int64  `cbor:"6,keyasint,omitempty"`
	Atime int64  `cbor:"7,keyasint,omitempty"`
	Mtime int64  `cbor:"8,keyasint,omitempty"`
	Ctime int64  `cbor:"9,keyasint,omitempty"`
}

// Response answers request id. Err is set on failure (and, for a Run
// that was cancelled, together with Exit). The other fields are the
// request's result.
type Response struct {
	Err     *Error     `cbor:"1,keyasint,omitempty"`
	VM      uint64     `cbor:"2,keyasint,omitempty"`  // CreateVM
	Data    []byte     `cbor:"3,keyasint,omitempty"`  // ReadFile: the tail of the contents; Metrics: the text
	Dir     string     `cbor:"4,keyasint,omitempty"`  // ReadDir: the directory's resolved path
	Entries []DirEntry `cbor:"5,keyasint,omitempty"`  // ReadDir
	Stat    *Stat      `cbor:"6,keyasint,omitempty"`  // Stat, Lstat
	Target  string     `cbor:"7,keyasint,omitempty"`  // Readlink
	Exit    *Exit      `cbor:"8,keyasint,omitempty"`  // Run
	PID     int        `cbor:"9,keyasint,omitempty"`  // Spawn, NewContext
	Context uint64     `cbor:"10,keyasint,omitempty"` // NewContext
	Value   []byte     `cbor:"11,keyasint,omitempty"` // Evaluate: the value's JSON
	Stdout  []byte     `cbor:"12,keyasint,omitempty"` // Evaluate
	Stderr  []byte     `cbor:"13,keyasint,omitempty"` // Evaluate
	// Truncated says Evaluate's output went past its bound.
	Truncated bool `cbor:"14,keyasint,omitempty"`
}

// newBody returns a fresh value for the body of a message of type t.
func newBody(t Type) (any, bool) {
	switch t {
	case THello:
		return new(Hello), true
	case TWelcome:
		return new(Welcome), true
	case TFatal:
		return new(Fatal), true
	case TResponse:
		return new(Response), true
	case TCancel:
		return new(Cancel), true
	case TData:
		return new(Data), true
	case TCredit:
		return new(Credit), true
	case TClose:
		return new(Close), true
	case TExit:
		return new(Exit), true
	case TVMEvent:
		return new(VMEvent), true
	case TAudit:
		return new(Audit), true
	case TCreateVM:
		return new(CreateVM), true
	case TCloseVM:
		return new(VMRef), true
	case TReadFile, TMkdir, TMkdirAll, TReadDir, TStat, TLstat, TRemove, TRemoveAll,
		TReadlink, TChmod, TUnmount:
		return new(PathOp), true
	case TWriteFile:
		return new(WriteFile), true
	case TRename, TSymlink:
		return new(TwoPaths), true
	case TMount:
		return new(MountReq), true
	case TRun:
		return new(Run), true
	case TSpawn:
		return new(Spawn), true
	case TSignal:
		return new(Signal), true
	case TMetrics:
		return new(Metrics), true
	case TDial:
		return new(Dial), true
	case TWatch:
		return new(Watch), true
	case TToolCall:
		return new(ToolCall), true
	case TToolResult:
		return new(ToolResult), true
	case TNewContext:
		return new(NewContext), true
	case TEvaluate:
		return new(Evaluate), true
	case TCloseContext:
		return new(ContextRef), true
	case TResize:
		return new(Resize), true
	case TSnapshot:
		return new(Snapshot), true
	}
	return nil, false
}
