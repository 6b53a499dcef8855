package js

import (
	"fmt"
	"math"
	"strings"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// The bridge is everything JavaScript in a VM can call in the host:
// bridgeTable lists it, each function with the arguments it takes, as
// gVisor's syscall table and wazero's WASI host functions do. The
// dispatcher (bridgeEntry.decode) checks and decodes the arguments before
// the function runs, so a function body sees typed values only and a
// guest passing anything else gets EINVAL without reaching it.
//
// A parameter list is "name kind, name kind, ...". Kinds:
//
//	int    a finite number within ±2^53, truncated toward zero
//	float  any number (NaN for an absent or non-number argument: never an error)
//	string a string
//	path   a string without NUL
//	bool   the argument's truthiness (absent: false)
//	bytes  the bytes of the scratch buffer or a blob (see bytesArg), consumed
//	value  the raw value, which the function checks itself
//
// A kind written "?int" (or ?string, ?path, ?bytes) is optional: an absent,
// undefined or null argument is accepted as the kind's zero value, and
// callArgs.has tells it apart; any other non-matching value is still
// EINVAL. A trailing "..." accepts more arguments than listed, as raw
// values (callArgs.rest).
type bridgeEntry struct {
	name   string
	params string
	fn     func(r *rt, a *callArgs) (*v8.Value, error)
}

// bridgeTable is the whole bridge, grouped by the file that implements
// each function. Keep each file's entries together under its comment.
var bridgeTable = []bridgeEntry{
	// bridge.go: the scratch buffer, blobs and the memory check.
	{"setScratch", "buf value", bridgeSetScratch},
	{"extCheck", "n float", bridgeExtCheck},
	{"blobNew", "size int", bridgeBlobNew},
	{"blobAppend", "id int, n int", bridgeBlobAppend},
	{"blobSize", "id int", bridgeBlobSize},
	{"blobRead", "id int, off int", bridgeBlobRead},
	{"blobFree", "id int", bridgeBlobFree},

	// bridge_gc.go
	{"gc", "", bridgeGC},
	{"gcTasks", "", bridgeGCTasks},

	// bridge_fs.go
	{"open", "path path, flags int, mode int", bridgeOpen},
	{"close", "fd int", bridgeClose},
	{"stat", "path path, follow bool", bridgeStat},
	{"statfs", "path path", bridgeStatfs},
	{"fstat", "fd int", bridgeFstat},
	{"access", "path path, mode int", bridgeAccess},
	{"readdir", "path path", bridgeReaddir},
	{"mkdir", "path path, mode int", bridgeMkdir},
	{"rmdir", "path path", bridgeRmdir},
	{"unlink", "path path", bridgeUnlink},
	{"rename", "from path, to path", bridgeRename},
	{"link", "existing path, path path", bridgeLink},
	{"symlink", "target path, path path", bridgeSymlink},
	{"readlink", "path path", bridgeReadlink},
	{"realpath", "path path", bridgeRealpath},
	{"chmod", "path path, mode int, follow bool", bridgeChmod},
	{"fchmod", "fd int, mode int", bridgeFchmod},
	{"chown", "path path, uid int, gid int, follow bool", bridgeChown},
	{"fchown", "fd int, uid int, gid int", bridgeFchown},
	{"utimes", "path path, atime float, mtime float, follow bool", bridgeUtimes},
	{"futimes", "fd int, atime float, mtime float", bridgeFutimes},
	{"truncate", "path path, size int", bridgeTruncate},
	{"ftruncate", "fd int, size int", bridgeFtruncate},

	// bridge_io.go
	{"readStart", "fd int, h int", bridgeReadStart},
	{"readOnce", "fd int, h int, n int", bridgeReadOnce},
	{"readPause", "h int, paused bool", bridgeReadPause},
	{"readStop", "h int", bridgeReadStop},
	{"readRef", "h int, ref bool", bridgeReadRef},
	{"writeAsync", "fd int, data bytes, id int", bridgeWriteAsync},
	{"spawn", "request string", bridgeSpawn},
	{"childRef", "pid int, ref bool", bridgeChildRef},
	{"spawnSync", "request string, input ?bytes", bridgeSpawnSync},

	// bridge_iov.go
	{"readv", "fd int, lens string, pos int", bridgeReadv},
	{"writev", "fd int, lens string, data bytes, pos int", bridgeWritev},

	// bridge_proc.go
	{"write", "fd int, s string", bridgeWrite},
	{"writeScratch", "fd int, n int, pos int", bridgeWriteScratch},
	{"read", "fd int, n int, pos int", bridgeRead},
	{"exit", "code ?int", bridgeExit},
	{"cwd", "", bridgeCwd},
	{"chdir", "dir path", bridgeChdir},
	{"umask", "mask int", bridgeUmask},
	{"hrtime", "", bridgeHrtime},
	{"memoryUsage", "", bridgeMemoryUsage},
	{"kill", "pid int, sig int", bridgeKill},
	{"getPriority", "pid int", bridgeGetPriority},
	{"setPriority", "pid int, prio int", bridgeSetPriority},
	{"signalWatch", "sig int, on bool", bridgeSignalWatch},
	{"random", "n int", bridgeRandom},
	{"randomInt", "lo int, hi int", bridgeRandomInt},
	{"utf8Encode", "s string", bridgeUtf8Encode},
	{"utf8Decode", "data bytes", bridgeUtf8Decode},
	{"utf8Valid", "data bytes", bridgeUtf8Valid},
	{"osInfo", "", bridgeOsInfo},
	{"timerStart", "id int, ms float, ref bool", bridgeTimerStart},
	{"timerStop", "id int", bridgeTimerStop},
	{"timerRef", "id int, ref bool", bridgeTimerRef},

	// bridge_tty.go
	{"isatty", "fd int", bridgeIsatty},
	{"ttySetRaw", "fd int, raw bool", bridgeTtySetRaw},
	{"ttySize", "fd int", bridgeTtySize},

	// bridge_watch.go
	{"watchInit", "", bridgeWatchInit},
	{"watchBell", "fd int", bridgeWatchBell},
	{"watchRead", "fd int", bridgeWatchRead},
	{"watchAdd", "fd int, path path, recursive bool", bridgeWatchAdd},
	{"watchRm", "fd int, wd int", bridgeWatchRm},

	// bridge_ipc.go
	{"duplexPair", "", bridgeDuplexPair},
	{"spawnExtra", "request string", bridgeSpawnExtra},
	{"duplexShutdown", "fd int, writeOnly bool", bridgeDuplexShutdown},
	{"ipcCloexec", "fd int, on bool", bridgeIpcCloexec},

	// bridge_asyncctx.go
	{"ctxGet", "box value", bridgeCtxGet},
	{"ctxSet", "frame value", bridgeCtxSet},
	{"promiseHooks", "init value, resolve value, before value, after value", bridgePromiseHooks},

	// rejections.go
	{"rejectTake", "box value", bridgeRejectTake},

	// bridge_net.go
	{"netSocket", "domain int, type int", bridgeNetSocket},
	{"netSocketPair", "", bridgeNetSocketPair},
	{"netBind", "fd int, host string, port int", bridgeNetBind},
	{"netListen", "fd int, backlog int", bridgeNetListen},
	{"netConnect", "fd int, host string, port int, id int", bridgeNetConnect},
	{"netAcceptStart", "fd int, h int", bridgeNetAcceptStart},
	{"netAcceptStop", "h int", bridgeNetAcceptStop},
	{"netAcceptRef", "h int, ref bool", bridgeNetAcceptRef},
	{"netShutdown", "fd int", bridgeNetShutdown},
	{"netName", "fd int, peer bool", bridgeNetName},
	{"netSetOpt", "fd int, name string, val int", bridgeNetSetOpt},
	{"dnsLookup", "host string, id int", bridgeDNSLookup},
	{"udpSend", "fd int, data bytes, host ?string, port ?int, id int", bridgeUDPSend},
	{"udpRecvStart", "fd int, h int", bridgeUDPRecvStart},

	// bridge_worker.go
	{"portNew", "", bridgePortNew},
	{"bcNew", "name string", bridgeBCNew},
	{"portPost", "id int, data bytes, transfer string", bridgePortPost},
	{"portStart", "id int", bridgePortStart},
	{"portStop", "id int", bridgePortStop},
	{"portRef", "id int, ref bool", bridgePortRef},
	{"portClose", "id int", bridgePortClose},
	{"portRecv", "id int", bridgePortRecv},
	{"workerStart", "spec string, init bytes", bridgeWorkerStart},
	{"workerTerminate", "tid int", bridgeWorkerTerminate},
	{"workerInit", "", bridgeWorkerInit},

	// bridge_module.go
	{"resolve", "request string, dir path, kind string", bridgeResolve},
	{"compileModule", "file path", bridgeCompileModule},
	{"compileLazy", "name string", bridgeCompileLazy},
	{"compileFunction", "src string, file string", bridgeCompileFunction},
	{"compileESM", "src string, file path, ts bool", bridgeCompileESM},
	{"transform", "src string, file string, kind string", bridgeTransform},
	{"transformScript", "src string, name string, kind string", bridgeTransformScript},
	{"mapPosition", "name string, line int, col int", bridgeMapPosition},
	{"lazyAsset", "name string", bridgeLazyAsset},

	// bridge_tools.go
	{"ctxReply", "id int, kind int, text string", bridgeCtxReply},
	{"toolLimit", "", bridgeToolLimit},
	{"toolList", "", bridgeToolList},
	{"toolCall", "name string, args string, id int", bridgeToolCall},

	// bridge_repl.go
	{"replRun", "fn value", bridgeReplRun},

	// bridge_types.go
	{"isType", "v value, index int", bridgeIsType},

	// bridge_crypto*.go, bridge_zlib_stream.go: crypto, zlib and Brotli
	{"cryptoIn", "slot int, data bytes", bridgeCryptoIn},
	{"cryptoOut", "slot int", bridgeCryptoOut},
	{"hashNew", "alg string, key int", bridgeHashNew},
	{"hashUpdate", "id int, data bytes", bridgeHashUpdate},
	{"hashDigest", "id int", bridgeHashDigest},
	{"hashCopy", "id int", bridgeHashCopy},
	{"kdfInput", "slot int, data bytes", bridgeKDFInput},
	{"pbkdf2", "iterations int, keyLen int, digest string", bridgePBKDF2},
	{"scrypt", "n int, r int, p int, maxmem int, keyLen int", bridgeScrypt},
	{"hkdf", "digest string, keyLen int", bridgeHKDF},
	{"cipherInfo", "name string", bridgeCipherInfo},
	{"cipherInit", "name string, decrypt bool, keyLen int, keyAndIV bytes", bridgeCipherInit},
	{"cipherUpdate", "name string, decrypt bool, autoPadding bool, final bool, keyLen int, stateLen int, keyStateData bytes", bridgeCipherUpdate},
	{"aeadTag", "name string", bridgeAEADTag},
	{"keyImport", "kind string, format string, type string, hasPassphrase bool", bridgeKeyImport},
	{"keyPublic", "", bridgeKeyPublic},
	{"keyExport", "format string, type string, cipher ?string", bridgeKeyExport},
	{"keyGenerate", "kind string", bridgeKeyGenerate},
	{"signDigest", "digest string, padding int, saltLength ?int, p1363 bool", bridgeSignDigest},
	{"verifyDigest", "digest string, padding int, saltLength ?int, p1363 bool", bridgeVerifyDigest},
	{"rsaCrypt", "op string, padding int, digest string", bridgeRSACrypt},
	{"ecdhKeys", "curve string, generate bool", bridgeECDHKeys},
	{"ecdhCompute", "curve string", bridgeECDHCompute},
	{"ecdhConvert", "curve string, format string", bridgeECDHConvert},
	{"diffieHellman", "", bridgeDiffieHellman},
	{"dhGroup", "name string", bridgeDHGroup},
	{"dhCheck", "", bridgeDHCheck},
	{"dhGenPrime", "bits int, generator int", bridgeDHGenPrime},
	{"dhModExp", "", bridgeDHModExp},
	{"zlib", "op string, data bytes, quality int, maxOutputLength int, lgwin float", bridgeZlib},
	{"crc32", "data bytes, value float", bridgeCRC32},
	{"brotliNew", "compress int, quality int, lgwin int", bridgeBrotliNew},
	{"brotliPush", "id int, data bytes, op int, maxOutputLength int", bridgeBrotliPush},
	{"brotliMore", "", bridgeBrotliMore},
	{"brotliFree", "id int", bridgeBrotliFree},

	// bridge_http2.go, bridge_http2_server.go
	{"h2Open", "fd int, h int, options string, id int", bridgeH2Open},
	{"h2Request", "h int, sh int, request string, endStream bool", bridgeH2Request},
	{"h2Write", "sh int, data bytes, id int", bridgeH2Write},
	{"h2Trailers", "sh int, trailers string", bridgeH2Trailers},
	{"h2End", "sh int", bridgeH2End},
	{"h2Pause", "sh int, paused bool", bridgeH2Pause},
	{"h2Cancel", "sh int", bridgeH2Cancel},
	{"h2Ref", "h int, ref bool", bridgeH2Ref},
	{"h2Close", "h int, graceful bool", bridgeH2Close},
	{"h2Ping", "h int, id int", bridgeH2Ping},
	{"h2sServe", "fd int, h int, options string", bridgeH2sServe},
	{"h2sRespond", "sh int, response string, id int", bridgeH2sRespond},
	{"h2sWrite", "sh int, data bytes, id int", bridgeH2sWrite},
	{"h2sEnd", "sh int, trailers string, id int", bridgeH2sEnd},
	{"h2sReset", "sh int, code float", bridgeH2sReset},
	{"h2sPause", "sh int, paused bool", bridgeH2sPause},
	{"h2sPush", "sh int, request string, id int", bridgeH2sPush},
	{"h2sRef", "h int, ref bool", bridgeH2sRef},
	{"h2sClose", "h int, graceful bool", bridgeH2sClose},

	// bridge_tls.go
	{"tlsHandshake", "fd int, request string, id int", bridgeTLSHandshake},
	{"tlsSNIReply", "id int, answer string", bridgeTLSSNIReply},
}

type argKind uint8

const (
	kindInt argKind = iota
	kindFloat
	kindString
	kindPath
	kindBool
	kindBytes
	kindValue
)

var kindNames = map[string]argKind{
	"int": kindInt, "float": kindFloat, "string": kindString, "path": kindPath,
	"bool": kindBool, "bytes": kindBytes, "value": kindValue,
}

type param struct {
	name     string
	kind     argKind
	optional bool
}

// signature is a parsed parameter list.
type signature struct {
	params   []param
	variadic bool
}

// maxParams bounds a signature, so that callArgs holds its values inline.
const maxParams = 12

func parseSignature(s string) (signature, error) {
	var sig signature
	s = strings.TrimSpace(s)
	if s == "" {
		return sig, nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "..." {
			if i != len(parts)-1 {
				return sig, fmt.Errorf("%q: ... must come last", s)
			}
			sig.variadic = true
			break
		}
		name, kind, ok := strings.Cut(p, " ")
		if !ok || name == "" {
			return sig, fmt.Errorf("%q: parameter %q is not \"name kind\"", s, p)
		}
		kind = strings.TrimSpace(kind)
		pr := param{name: name}
		if strings.HasPrefix(kind, "?") {
			pr.optional = true
			kind = kind[1:]
		}
		k, ok := kindNames[kind]
		if !ok {
			return sig, fmt.Errorf("%q: unknown kind %q", s, kind)
		}
		if pr.optional && (k == kindFloat || k == kindBool || k == kindValue) {
			return sig, fmt.Errorf("%q: %s is optional by nature; write it without ?", s, kind)
		}
		pr.kind = k
		sig.params = append(sig.params, pr)
	}
	nbytes := 0
	for _, p := range sig.params {
		if p.kind == kindBytes {
			nbytes++
		}
	}
	if nbytes > 1 {
		// One blob per call at most: consuming two could leave the
		// first taken when the second is bad.
		return sig, fmt.Errorf("%q: more than one bytes parameter", s)
	}
	if len(sig.params) > maxParams {
		return sig, fmt.Errorf("%q: more than %d parameters", s, maxParams)
	}
	return sig, nil
}

// compiledEntry is a table entry with its signature parsed once.
type compiledEntry struct {
	bridgeEntry
	sig signature
}

// compiledBridge is bridgeTable checked and parsed: a malformed signature
// or a duplicate name is a programming error, found by the first test
// that makes an engine. It is built in init, not by its initializer:
// table functions lead (through starting a worker's isolate) back to
// installBridge, and an initializer would make that a cycle.
var compiledBridge []compiledEntry

func init() { compiledBridge = compileBridge(bridgeTable) }

func compileBridge(table []bridgeEntry) []compiledEntry {
	out := make([]compiledEntry, 0, len(table))
	seen := map[string]bool{}
	for _, e := range table {
		if seen[e.name] {
			panic("js: duplicate bridge function " + e.name)
		}
		seen[e.name] = true
		sig, err := parseSignature(e.params)
		if err != nil {
			panic("js: bridge function " + e.name + ": " + err.Error())
		}
		out = append(out, compiledEntry{e, sig})
	}
	return out
}

// call decodes a call's arguments by e's signature and runs e.
func (e *compiledEntry) call(r *rt, args []*v8.Value) (*v8.Value, error) {
	a := r.getArgs()
	defer r.putArgs(a)
	if err := r.decodeArgs(&e.sig, args, a); err != nil {
		return nil, err
	}
	return e.fn(r, a)
}

// argVal is one decoded argument.
type argVal struct {
	n   float64
	s   string
	b   []byte
	has bool
}

// callArgs are a bridge call's arguments, decoded by its signature.
type callArgs struct {
	sig  *signature
	vals [maxParams]argVal
	raw  []*v8.Value
}

func (a *callArgs) check(i int, k argKind) *argVal {
	if i >= len(a.sig.params) || a.sig.params[i].kind != k {
		// A body asking for what its signature does not declare: a bug
		// in the table, recovered by invoke as EIO.
		panic(fmt.Sprintf("js: bridge argument %d read as kind %d", i, k))
	}
	return &a.vals[i]
}

// int returns int argument i.
func (a *callArgs) int(i int) int { return int(a.check(i, kindInt).n) }

// float returns float argument i (NaN unless a number was passed).
func (a *callArgs) float(i int) float64 { return a.check(i, kindFloat).n }

// str returns string argument i.
func (a *callArgs) str(i int) string { return a.check(i, kindString).s }

// path returns path argument i.
func (a *callArgs) path(i int) string { return a.check(i, kindPath).s }

// bool returns bool argument i.
func (a *callArgs) bool(i int) bool { return a.check(i, kindBool).has }

// bytes returns bytes argument i.
func (a *callArgs) bytes(i int) []byte { return a.check(i, kindBytes).b }

// value returns value argument i: nil when absent.
func (a *callArgs) value(i int) *v8.Value {
	a.check(i, kindValue)
	if i < len(a.raw) {
		return a.raw[i]
	}
	return nil
}

// has reports whether optional argument i was passed (not undefined or
// null).
func (a *callArgs) has(i int) bool {
	if i >= len(a.sig.params) {
		panic(fmt.Sprintf("js: bridge argument %d not declared", i))
	}
	return a.vals[i].has
}

// rest returns the arguments past the declared ones of a variadic
// signature.
func (a *callArgs) rest() []*v8.Value {
	if !a.sig.variadic {
		panic("js: rest() of a signature without ...")
	}
	if len(a.raw) <= len(a.sig.params) {
		return nil
	}
	return a.raw[len(a.sig.params):]
}

// decodeArgs checks args against sig into a. Nothing is consumed unless every
// argument is valid: bytes arguments are taken last.
func (r *rt) decodeArgs(sig *signature, args []*v8.Value, a *callArgs) error {
	a.sig, a.raw = sig, args
	bytesAt := -1
	for i, p := range sig.params {
		v := &a.vals[i]
		*v = argVal{}
		var x *v8.Value
		if i < len(args) {
			x = args[i]
		}
		// The kind's own test comes first: on the common path an argument
		// of the right type costs one call into V8 before its value. Only
		// primitive numbers are read: v8go's Number() runs ToNumber, which
		// for a Symbol or an object with a throwing valueOf aborts the
		// process.
		switch p.kind {
		case kindFloat:
			v.n = math.NaN()
			if x != nil && x.IsNumber() {
				v.n, v.has = x.Number(), true
			}
		case kindBool:
			v.has = x != nil && x.Boolean()
		case kindValue:
			v.has = x != nil && !x.IsUndefined() && !x.IsNull()
		case kindInt, kindBytes:
			if x == nil || !x.IsNumber() {
				if p.optional && isAbsent(x) {
					continue
				}
				return errno.EINVAL
			}
			f := x.Number()
			if math.IsNaN(f) || math.IsInf(f, 0) || f < -(1<<53) || f > 1<<53 {
				return errno.EINVAL
			}
			v.n, v.has = float64(int(f)), true
			if p.kind == kindBytes {
				bytesAt = i
			}
		case kindString, kindPath:
			if x == nil || !x.IsString() {
				if p.optional && isAbsent(x) {
					continue
				}
				return errno.EINVAL
			}
			v.s, v.has = x.String(), true
			if p.kind == kindPath && strings.IndexByte(v.s, 0) >= 0 {
				return errno.EINVAL
			}
		}
	}
	if bytesAt >= 0 && a.vals[bytesAt].has {
		b, err := r.bytesArg(int(a.vals[bytesAt].n))
		if err != nil {
			return err
		}
		a.vals[bytesAt].b = b
	}
	return nil
}

// isAbsent reports whether an argument was left out: missing, undefined
// or null.
func isAbsent(x *v8.Value) bool { return x == nil || x.IsUndefined() || x.IsNull() }

// getArgs returns a callArgs to decode into; bridge calls can nest (a
// function may run guest code that calls the bridge), so each call takes
// its own from a small free list.
func (r *rt) getArgs() *callArgs {
	if n := len(r.argsFree); n > 0 {
		a := r.argsFree[n-1]
		r.argsFree = r.argsFree[:n-1]
		return a
	}
	return new(callArgs)
}

func (r *rt) putArgs(a *callArgs) {
	for i := range a.sig.params {
		a.vals[i] = argVal{}
	}
	a.sig, a.raw = nil, nil
	if len(r.argsFree) < 8 {
		r.argsFree = append(r.argsFree, a)
	}
}
