// Package wasmbin reads and rewrites WebAssembly binaries: the LEB128
// numbers and sections of the format, and ExportGlobals, the rewrite that
// lets secexec's engine snapshot a module's initialised state.
package wasmbin

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// A reactor's start-up (_initialize: the Go runtime's and the packages'
// initialisation) leaves its whole state in linear memory and in the
// module's mutable globals (Go keeps SP, g and its return registers
// there). A runtime can copy memory from outside, but wazero, like the
// WebAssembly API itself, reads and writes only exported globals.
// ExportGlobals exports every mutable global the module defines, so that
// secexec's engine can snapshot an initialised instance and start later
// instances from the snapshot instead of initialising each one.

// GlobalExportPrefix starts the export name of each mutable global
// ExportGlobals exports; the global's index follows in decimal.
const GlobalExportPrefix = "secexec_global_"

// GlobalCountExport names the immutable i32 global ExportGlobals adds:
// how many mutable globals it exported. A module that has it promises
// that its mutable globals are exactly GlobalExportPrefix+"0" ...
// GlobalExportPrefix+strconv.Itoa(count-1) (in index order, numbered
// from 0 among the exported ones).
const GlobalCountExport = "secexec_globals"

// ErrUnsupportedGlobals is returned for a module whose globals
// ExportGlobals does not rewrite (an initialiser it cannot skip, a name
// already taken).
var ErrUnsupportedGlobals = errors.New("wasmbin: globals not exportable")

// ExportGlobals returns module with every mutable global it defines
// exported (see GlobalExportPrefix) and a count global added
// (GlobalCountExport). Imported globals are left alone: their owner has
// them.
func ExportGlobals(module []byte) ([]byte, error) {
	if len(module) < 8 || !bytes.Equal(module[:4], []byte("\x00asm")) {
		return nil, fmt.Errorf("wasmbin: not a WebAssembly module")
	}
	type section struct {
		id   byte
		body []byte
		raw  []byte
	}
	var sections []section
	for i := 8; i < len(module); {
		id := module[i]
		size, n, err := ReadULEB(module[i+1:])
		if err != nil {
			return nil, err
		}
		start := i + 1 + n
		end := start + int(size)
		if end > len(module) || end < start {
			return nil, fmt.Errorf("wasmbin: section %d overruns the module", id)
		}
		sections = append(sections, section{id, module[start:end], module[i:end]})
		i = end
	}
	imported := uint64(0)
	var globals, exports []byte
	haveExports := false
	for _, s := range sections {
		switch s.id {
		case 2:
			n, err := countImportedGlobals(s.body)
			if err != nil {
				return nil, err
			}
			imported = n
		case 6:
			globals = s.body
		case 7:
			exports, haveExports = s.body, true
		}
	}
	var mutable []uint64 // global indices
	defined := uint64(0)
	if globals != nil {
		count, n, err := ReadULEB(globals)
		if err != nil {
			return nil, err
		}
		p := n
		if count > uint64(len(globals)) {
			return nil, fmt.Errorf("wasmbin: global section claims %d globals in %d bytes", count, len(globals))
		}
		for k := uint64(0); k < count; k++ {
			if p+2 > len(globals) {
				return nil, fmt.Errorf("wasmbin: global section truncated")
			}
			mut := globals[p+1]
			p += 2
			n, err := skipConstExpr(globals[p:])
			if err != nil {
				return nil, err
			}
			p += n
			if mut == 1 {
				mutable = append(mutable, imported+k)
			} else if mut != 0 {
				return nil, fmt.Errorf("wasmbin: global %d has mutability %d", imported+k, mut)
			}
		}
		if p != len(globals) {
			return nil, fmt.Errorf("wasmbin: %d stray bytes after the globals", len(globals)-p)
		}
		defined = count
	}
	// The new global: immutable i32 holding len(mutable).
	newGlobals := AppendULEB(nil, defined+1)
	if globals != nil {
		_, n, _ := ReadULEB(globals)
		newGlobals = append(newGlobals, globals[n:]...)
	}
	newGlobals = append(newGlobals, 0x7f, 0)
	newGlobals = append(append(newGlobals, 0x41), AppendSLEB(nil, int64(len(mutable)))...)
	newGlobals = append(newGlobals, 0x0b)
	countIndex := imported + defined

	var entries []byte
	exportCount := uint64(0)
	if haveExports {
		c, n, err := ReadULEB(exports)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(exports, []byte(GlobalExportPrefix)) || bytes.Contains(exports, []byte(GlobalCountExport)) {
			return nil, fmt.Errorf("%w: the module already exports a %s name", ErrUnsupportedGlobals, GlobalExportPrefix)
		}
		exportCount, entries = c, append(entries, exports[n:]...)
	}
	addExport := func(name string, index uint64) {
		entries = AppendULEB(entries, uint64(len(name)))
		entries = append(entries, name...)
		entries = append(entries, 3) // global
		entries = AppendULEB(entries, index)
		exportCount++
	}
	for i, g := range mutable {
		addExport(GlobalExportPrefix+strconv.Itoa(i), g)
	}
	addExport(GlobalCountExport, countIndex)
	newExports := append(AppendULEB(nil, exportCount), entries...)

	out := append([]byte(nil), module[:8]...)
	wroteGlobals, wroteExports := false, false
	for _, s := range sections {
		// Known sections come in id order (custom sections, id 0, may be
		// anywhere; data count, 12, sits between 10 and 11): the global
		// section goes before 7, the export section before 8.
		if s.id != 0 && s.id != 6 && s.id != 7 && order(s.id) > order(6) && !wroteGlobals {
			out, wroteGlobals = AppendSection(out, 6, newGlobals), true
		}
		if s.id != 0 && s.id != 7 && order(s.id) > order(7) && !wroteExports {
			out, wroteExports = AppendSection(out, 7, newExports), true
		}
		switch s.id {
		case 6:
			out, wroteGlobals = AppendSection(out, 6, newGlobals), true
		case 7:
			if !wroteGlobals {
				out, wroteGlobals = AppendSection(out, 6, newGlobals), true
			}
			out, wroteExports = AppendSection(out, 7, newExports), true
		default:
			out = append(out, s.raw...)
		}
	}
	if !wroteGlobals {
		out = AppendSection(out, 6, newGlobals)
	}
	if !wroteExports {
		out = AppendSection(out, 7, newExports)
	}
	return out, nil
}

// order is a known section's place in a module: ids 1-11 in order, the
// data count section (12) between the code-adjacent element (9) and
// code (10) sections.
func order(id byte) int {
	switch {
	case id == 12:
		return 95 // after element (9 → 90), before code (10 → 100)
	default:
		return int(id) * 10
	}
}

// countImportedGlobals counts the global imports of an import section.
func countImportedGlobals(body []byte) (uint64, error) {
	count, n, err := ReadULEB(body)
	if err != nil {
		return 0, err
	}
	if count > uint64(len(body)) {
		return 0, fmt.Errorf("wasmbin: import section claims %d imports in %d bytes", count, len(body))
	}
	p := n
	globals := uint64(0)
	skipName := func() error {
		l, n, err := ReadULEB(body[p:])
		if err != nil {
			return err
		}
		if uint64(len(body)-p-n) < l {
			return fmt.Errorf("wasmbin: import name truncated")
		}
		p += n + int(l)
		return nil
	}
	for k := uint64(0); k < count; k++ {
		if err := skipName(); err != nil {
			return 0, err
		}
		if err := skipName(); err != nil {
			return 0, err
		}
		if p >= len(body) {
			return 0, fmt.Errorf("wasmbin: import truncated")
		}
		kind := body[p]
		p++
		switch kind {
		case 0: // function: type index
			_, n, err := ReadULEB(body[p:])
			if err != nil {
				return 0, err
			}
			p += n
		case 1: // table: reftype, limits
			if p >= len(body) {
				return 0, fmt.Errorf("wasmbin: import truncated")
			}
			p++
			n, err := skipLimits(body[p:])
			if err != nil {
				return 0, err
			}
			p += n
		case 2: // memory: limits
			n, err := skipLimits(body[p:])
			if err != nil {
				return 0, err
			}
			p += n
		case 3: // global: valtype, mutability
			if p+2 > len(body) {
				return 0, fmt.Errorf("wasmbin: import truncated")
			}
			p += 2
			globals++
		default:
			return 0, fmt.Errorf("%w: import kind %d", ErrUnsupportedGlobals, kind)
		}
	}
	return globals, nil
}

func skipLimits(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("wasmbin: limits truncated")
	}
	flag := b[0]
	p := 1
	_, n, err := ReadULEB(b[p:])
	if err != nil {
		return 0, err
	}
	p += n
	if flag&1 != 0 {
		_, n, err := ReadULEB(b[p:])
		if err != nil {
			return 0, err
		}
		p += n
	}
	return p, nil
}

// skipConstExpr returns the length of the constant expression at the
// start of b, its end opcode included.
func skipConstExpr(b []byte) (int, error) {
	p := 0
	for p < len(b) {
		op := b[p]
		p++
		switch op {
		case 0x0b: // end
			return p, nil
		case 0x41, 0x42, 0x23, 0xd2: // i32/i64.const, global.get, ref.func
			_, n, err := ReadULEB(b[p:]) // a signed LEB has the same length
			if err != nil {
				return 0, err
			}
			p += n
		case 0x43:
			p += 4
		case 0x44:
			p += 8
		case 0xd0: // ref.null type
			p++
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constant arithmetic
		default:
			return 0, fmt.Errorf("%w: initialiser opcode %#x", ErrUnsupportedGlobals, op)
		}
	}
	return 0, fmt.Errorf("wasmbin: initialiser truncated")
}

// AppendSection appends a section with id and body to b.
func AppendSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = AppendULEB(b, uint64(len(body)))
	return append(b, body...)
}

// ReadULEB reads an unsigned LEB128 number of at most 10 bytes from the
// start of b, returning it and its length.
func ReadULEB(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("wasmbin: bad LEB128")
}

// ReadSLEB32 reads a signed LEB128 number of at most 5 bytes (an i32)
// from the start of b, returning it and its length.
func ReadSLEB32(b []byte) (int64, int, error) {
	var v int64
	shift := 0
	for i := 0; i < len(b) && i < 5; i++ {
		v |= int64(b[i]&0x7f) << shift
		shift += 7
		if b[i] < 0x80 {
			if shift < 64 && b[i]&0x40 != 0 {
				v |= -1 << shift
			}
			return int64(int32(v)), i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("wasmbin: bad signed LEB128")
}

// AppendULEB appends v as unsigned LEB128.
func AppendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// AppendSLEB appends v as signed LEB128.
func AppendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
