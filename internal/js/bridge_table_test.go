package js

import (
	"errors"
	"math"
	"sort"
	"strings"
	"testing"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

func TestParseSignature(t *testing.T) {
	good := map[string]int{"": 0, "fd int": 1, "fd int, data bytes, pos ?int, ...": 3, " p path ,x float,b bool,v value,s ?string ": 5}
	for s, n := range good {
		sig, err := parseSignature(s)
		if err != nil || len(sig.params) != n {
			t.Errorf("parseSignature(%q) = %d params, %v", s, len(sig.params), err)
		}
	}
	for _, s := range []string{"fd", "fd integer", "..., fd int", "a bytes, b bytes", "x ?float", "b ?bool", "v ?value",
		"a int, b int, c int, d int, e int, f int, g int, h int, i int, j int, k int, l int, m int"} {
		if _, err := parseSignature(s); err == nil {
			t.Errorf("parseSignature(%q) accepted", s)
		}
	}
}

// TestDecodeArgs checks the dispatcher's decoding against real V8 values:
// what each kind accepts, what is EINVAL, and that a bad argument leaves
// the call's blob unconsumed.
func TestDecodeArgs(t *testing.T) {
	iso := v8.NewIsolate()
	defer iso.Dispose()
	ctx := v8.NewContext(iso)
	defer ctx.Close()
	val := func(src string) *v8.Value {
		v, err := ctx.RunScript(src, "t.js")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	r := &rt{scratch: []byte("0123456789"), blobs: map[int]*blob{}}
	decode := func(params string, args ...*v8.Value) (*callArgs, error) {
		sig, err := parseSignature(params)
		if err != nil {
			t.Fatal(err)
		}
		a := new(callArgs)
		return a, r.decodeArgs(&sig, args, a)
	}
	a, err := decode("fd int, p path, n float, b bool, data bytes, o ?int, v value, ...",
		val("7.9"), val("'/tmp'"), val("'x'"), val("({})"), val("3"), val("undefined"), val("null"), val("1"), val("2"))
	if err != nil {
		t.Fatal(err)
	}
	if a.int(0) != 7 || a.path(1) != "/tmp" || !math.IsNaN(a.float(2)) || !a.bool(3) || string(a.bytes(4)) != "012" ||
		a.has(5) || a.int(5) != 0 || a.value(6) == nil || a.has(6) || len(a.rest()) != 2 {
		t.Fatalf("decoded %+v", a.vals)
	}
	if _, err := decode("fd int"); !errors.Is(err, errno.EINVAL) {
		t.Errorf("absent int: %v", err)
	}
	for _, bad := range []string{"'7'", "NaN", "Infinity", "2**60", "({valueOf() { return 1 }})", "Symbol()", "1n"} {
		if _, err := decode("fd int", val(bad)); !errors.Is(err, errno.EINVAL) {
			t.Errorf("int %s: %v", bad, err)
		}
	}
	for _, bad := range []string{"'a\\u0000b'", "1", "({toString() { return '/' }})"} {
		if _, err := decode("p path", val(bad)); !errors.Is(err, errno.EINVAL) {
			t.Errorf("path %s: %v", bad, err)
		}
	}
	// A blob is consumed only when every argument is good.
	r.blobs[5] = &blob{data: []byte("blob"), want: 4}
	if _, err := decode("data bytes, fd int", val("-5"), val("'x'")); !errors.Is(err, errno.EINVAL) || r.blobs[5] == nil {
		t.Fatalf("bad call consumed the blob: %v", err)
	}
	if a, err := decode("data bytes, fd int", val("-5"), val("1")); err != nil || string(a.bytes(0)) != "blob" || r.blobs[5] != nil {
		t.Fatalf("blob: %v", err)
	}
	if _, err := decode("data bytes", val("11")); !errors.Is(err, errno.EINVAL) {
		t.Errorf("bytes past the scratch buffer: %v", err)
	}
	// Reading an argument as a kind its signature does not declare is a
	// bug, which invoke recovers as EIO.
	a, _ = decode("fd int", val("1"))
	func() {
		defer func() {
			if recover() == nil {
				t.Error("str of an int parameter did not panic")
			}
		}()
		a.str(0)
	}()
}

// TestBridgeIsTheTable: the functions a guest can call are exactly the
// table's.
func TestBridgeIsTheTable(t *testing.T) {
	v := bridgeVM(t)
	r := v.node(`console.log(Object.getOwnPropertyNames(globalThis.__test_bridge).sort().join(' '))`)
	var want []string
	for _, e := range bridgeTable {
		want = append(want, e.name)
	}
	sort.Strings(want)
	if got := strings.TrimSpace(r.stdout); got != strings.Join(want, " ") {
		t.Fatalf("bridge functions:\n got %s\nwant %s", got, strings.Join(want, " "))
	}
}
