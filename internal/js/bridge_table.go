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

	// bridge_io.go

	// bridge_iov.go

	// bridge_proc.go

	// bridge_tty.go

	// bridge_watch.go

	// bridge_ipc.go

	// bridge_asyncctx.go

	// rejections.go

	// bridge_net.go

	// bridge_worker.go

	// bridge_module.go

	// bridge_tools.go

	// bridge_repl.go

	// bridge_types.go

	// bridge_crypto*.go, bridge_zlib_stream.go: crypto, zlib and Brotli

	// bridge_http2.go, bridge_http2_server.go

	// tls (yours): bridge_tls.go
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
// that makes an engine.
var compiledBridge = func() []compiledEntry {
	out := make([]compiledEntry, 0, len(bridgeTable))
	seen := map[string]bool{}
	for _, e := range bridgeTable {
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
}()

// call decodes a call's arguments by e's signature and runs e.
func (e *compiledEntry) call(r *rt, args []*v8.Value) (*v8.Value, error) {
	a := r.getArgs()
	defer r.putArgs(a)
	if err := r.decodeArgs(&e.sig, args, a); err != nil {
		return nil, err
	}
	return e.fn(r, a)
}

func tableHas(name string) bool {
	for _, e := range bridgeTable {
		if e.name == name {
			return true
		}
	}
	return false
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
		absent := x == nil || x.IsUndefined() || x.IsNull()
		switch p.kind {
		case kindFloat:
			v.n = math.NaN()
			if x != nil && x.IsNumber() {
				v.n, v.has = x.Number(), true
			}
			continue
		case kindBool:
			v.has = x != nil && x.Boolean()
			continue
		case kindValue:
			v.has = !absent
			continue
		}
		if absent {
			if !p.optional {
				return errno.EINVAL
			}
			continue
		}
		v.has = true
		switch p.kind {
		case kindInt, kindBytes:
			if !x.IsNumber() {
				return errno.EINVAL
			}
			f := x.Number()
			if math.IsNaN(f) || math.IsInf(f, 0) || f < -(1<<53) || f > 1<<53 {
				return errno.EINVAL
			}
			v.n = float64(int(f))
			if p.kind == kindBytes {
				bytesAt = i
			}
		case kindString, kindPath:
			if !x.IsString() {
				return errno.EINVAL
			}
			v.s = x.String()
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
