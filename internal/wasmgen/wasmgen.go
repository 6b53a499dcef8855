// Package wasmgen assembles small WebAssembly modules in memory: guests
// that call host functions with exactly the arguments a test or fuzzer
// chose, which no C or Rust toolchain would let through.
package wasmgen

// Value types.
const (
	I32 byte = 0x7f
	I64 byte = 0x7e
)

// Type is a function signature.
type Type struct {
	Params, Results []byte
}

// Import is an imported function. Imports take the first function
// indices, in order.
type Import struct {
	Module, Name string
	Type         Type
}

// Func is a function defined by the module. Body is its instructions
// without the final end; Export, if set, exports it under that name.
type Func struct {
	Type   Type
	Body   []byte
	Export string
}

// Data is an active data segment of memory 0.
type Data struct {
	Offset int32
	Bytes  []byte
}

// Module assembles a module with the imports, the functions (indexed
// after the imports), one memory of pages pages (no maximum) exported as
// "memory", and the data.
func Module(imports []Import, funcs []Func, pages uint32, data []Data) []byte {
	var types [][]byte
	typeIdx := func(t Type) uint32 {
		b := append(append(append([]byte{0x60}, uleb(nil, uint64(len(t.Params)))...), t.Params...), uleb(nil, uint64(len(t.Results)))...)
		b = append(b, t.Results...)
		for i, x := range types {
			if string(x) == string(b) {
				return uint32(i)
			}
		}
		types = append(types, b)
		return uint32(len(types) - 1)
	}
	var imps, fns, exps, code [][]byte
	for _, im := range imports {
		imps = append(imps, uleb(append(append(name(im.Module), name(im.Name)...), 0), uint64(typeIdx(im.Type))))
	}
	for i, f := range funcs {
		fns = append(fns, uleb(nil, uint64(typeIdx(f.Type))))
		body := append(append([]byte{0}, f.Body...), 0x0b) // no locals
		code = append(code, append(uleb(nil, uint64(len(body))), body...))
		if f.Export != "" {
			exps = append(exps, uleb(append(name(f.Export), 0), uint64(len(imports)+i)))
		}
	}
	exps = append(exps, append(name("memory"), 2, 0))
	var segs [][]byte
	for _, d := range data {
		s := append(append([]byte{0}, I32Const(d.Offset)...), 0x0b)
		segs = append(segs, append(s, name(string(d.Bytes))...))
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, section(1, vec(types))...)
	m = append(m, section(2, vec(imps))...)
	m = append(m, section(3, vec(fns))...)
	m = append(m, section(5, vec([][]byte{uleb([]byte{0}, uint64(pages))}))...)
	m = append(m, section(7, vec(exps))...)
	m = append(m, section(10, vec(code))...)
	if len(segs) > 0 {
		m = append(m, section(11, vec(segs))...)
	}
	return m
}

// I32Const is the instruction i32.const v.
func I32Const(v int32) []byte { return sleb(append([]byte(nil), 0x41), int64(v)) }

// I64Const is the instruction i64.const v.
func I64Const(v int64) []byte { return sleb(append([]byte(nil), 0x42), v) }

// LocalGet is the instruction local.get i.
func LocalGet(i uint32) []byte { return uleb([]byte{0x20}, uint64(i)) }

// Call is the instruction call f.
func Call(f uint32) []byte { return uleb([]byte{0x10}, uint64(f)) }

// Drop is the instruction drop.
func Drop() []byte { return []byte{0x1a} }

func sleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func vec(items [][]byte) []byte {
	b := uleb(nil, uint64(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func name(s string) []byte { return append(uleb(nil, uint64(len(s))), s...) }

func section(id byte, body []byte) []byte {
	return append(uleb([]byte{id}, uint64(len(body))), body...)
}
