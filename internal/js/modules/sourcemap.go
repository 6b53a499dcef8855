package modules

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// SourceMap is the decoded "mappings" of a source map (version 3) with a
// single source: for each generated line, the segments that say where a
// generated column came from. Lines and columns are 0-based; columns
// count UTF-16 code units, as V8's positions and esbuild's maps do.
type SourceMap struct {
	lines [][]segment
}

type segment struct {
	genCol  int32
	srcLine int32 // -1: the segment maps to no source
	srcCol  int32
}

// Bounds on what is decoded: a map describes code that was at most
// maxSourceBytes long, so anything beyond these is malformed.
const (
	maxMapValue    = 1 << 30
	maxMapSegments = 64 << 20
)

var errBadMappings = errors.New("modules: malformed source map mappings")

// ParseSourceMap decodes a source map document. Only the mappings of the
// first source are kept: the maps this package makes have one source.
func ParseSourceMap(doc []byte) (*SourceMap, error) {
	var m struct {
		Version  int    `json:"version"`
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("modules: source map: %w", err)
	}
	if m.Version != 3 {
		return nil, fmt.Errorf("modules: source map version %d", m.Version)
	}
	return DecodeMappings(m.Mappings)
}

// DecodeMappings decodes the base64 VLQ "mappings" field of a source map.
// Segments that name a source other than the first are dropped.
func DecodeMappings(s string) (*SourceMap, error) {
	sm := &SourceMap{}
	var (
		line    []segment
		genCol  int64
		srcIdx  int64
		srcLine int64
		srcCol  int64
		name    int64
		fields  [5]int64
		total   int
	)
	for i := 0; i <= len(s); {
		if i == len(s) || s[i] == ';' {
			sortSegments(line)
			sm.lines = append(sm.lines, line)
			line, genCol = nil, 0
			i++
			continue
		}
		if s[i] == ',' {
			i++
			continue
		}
		n := 0
		for i < len(s) && s[i] != ',' && s[i] != ';' {
			if n == len(fields) {
				return nil, errBadMappings
			}
			v, next, err := decodeVLQ(s, i)
			if err != nil {
				return nil, err
			}
			fields[n] = v
			n++
			i = next
		}
		if n != 1 && n != 4 && n != 5 {
			return nil, errBadMappings
		}
		if total++; total > maxMapSegments {
			return nil, errBadMappings
		}
		genCol += fields[0]
		seg := segment{genCol: int32(genCol), srcLine: -1}
		if n >= 4 {
			srcIdx += fields[1]
			srcLine += fields[2]
			srcCol += fields[3]
			if n == 5 {
				name += fields[4]
			}
			if srcLine < 0 || srcCol < 0 || srcLine > maxMapValue || srcCol > maxMapValue || srcIdx < 0 || srcIdx > maxMapValue ||
				name < -maxMapValue || name > maxMapValue {
				return nil, errBadMappings
			}
			if srcIdx == 0 {
				seg.srcLine, seg.srcCol = int32(srcLine), int32(srcCol)
			}
		}
		if genCol < 0 || genCol > maxMapValue {
			return nil, errBadMappings
		}
		line = append(line, seg)
	}
	return sm, nil
}

// sortSegments orders a line's segments by generated column (they
// normally are already); the sort is stable so the first of equal
// columns wins.
func sortSegments(l []segment) {
	if !sort.SliceIsSorted(l, func(i, j int) bool { return l[i].genCol < l[j].genCol }) {
		sort.SliceStable(l, func(i, j int) bool { return l[i].genCol < l[j].genCol })
	}
}

const vlqChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

var vlqValue = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(vlqChars); i++ {
		t[vlqChars[i]] = int8(i)
	}
	return t
}()

// decodeVLQ reads one base64 VLQ number at s[i:].
func decodeVLQ(s string, i int) (int64, int, error) {
	var v int64
	shift := 0
	for {
		if i >= len(s) {
			return 0, i, errBadMappings
		}
		d := vlqValue[s[i]]
		i++
		if d < 0 {
			return 0, i, errBadMappings
		}
		v |= int64(d&31) << shift
		if d&32 == 0 {
			break
		}
		shift += 5
		if shift > 35 {
			return 0, i, errBadMappings
		}
	}
	neg := v&1 != 0
	v >>= 1
	if neg {
		v = -v
	}
	return v, i, nil
}

// encodeVLQ appends v in base64 VLQ (for tests and re-encoding).
func encodeVLQ(b []byte, v int64) []byte {
	u := v << 1
	if v < 0 {
		u = (-v)<<1 | 1
	}
	for {
		d := u & 31
		u >>= 5
		if u != 0 {
			d |= 32
		}
		b = append(b, vlqChars[d])
		if u == 0 {
			return b
		}
	}
}

// Lookup returns the source position of generated line and column
// (0-based): that of the segment with the greatest column not after col
// on that line, or of the line's first segment when col is before all of
// them.
func (m *SourceMap) Lookup(line, col int) (srcLine, srcCol int, ok bool) {
	if m == nil || line < 0 || line >= len(m.lines) {
		return 0, 0, false
	}
	segs := m.lines[line]
	if len(segs) == 0 {
		return 0, 0, false
	}
	i := sort.Search(len(segs), func(i int) bool { return int(segs[i].genCol) > col }) - 1
	if i < 0 {
		i = 0
	}
	// Prefer a segment that maps somewhere: esbuild ends some spans with
	// unmapped segments.
	for j := i; j >= 0; j-- {
		if segs[j].srcLine >= 0 {
			return int(segs[j].srcLine), int(segs[j].srcCol), true
		}
	}
	for j := i + 1; j < len(segs); j++ {
		if segs[j].srcLine >= 0 {
			return int(segs[j].srcLine), int(segs[j].srcCol), true
		}
	}
	return 0, 0, false
}

// Lines reports how many generated lines the map covers.
func (m *SourceMap) Lines() int { return len(m.lines) }

// Scripts is a process's table of the transformed scripts it compiled,
// by script name (the file's path, or its file: URL for an ES module):
// what maps their positions back to the source. Maps are decoded on
// first use. The table is bounded; scripts beyond the bounds are simply
// not mapped.
type Scripts struct {
	m     map[string]*script
	bytes int
}

type script struct {
	mod  *Module
	head int // columns of the module wrapper before the code's first line
	sm   *SourceMap
	bad  bool
}

// Bounds of a Scripts table.
const (
	maxScripts     = 8192
	maxScriptBytes = 256 << 20
)

// Add records a compiled script; head is the length of the wrapper's
// text before m.Code on its first line. It reports whether the script
// was recorded.
func (s *Scripts) Add(name string, m *Module, head int) bool {
	if m == nil || m.Map == "" {
		return false
	}
	if s.m == nil {
		s.m = map[string]*script{}
	}
	if old, ok := s.m[name]; ok {
		s.bytes -= len(old.mod.Map)
	} else if len(s.m) >= maxScripts {
		return false
	}
	if s.bytes+len(m.Map) > maxScriptBytes {
		return false
	}
	s.m[name] = &script{mod: m, head: head}
	s.bytes += len(m.Map)
	return true
}

// Has reports whether name is a recorded script.
func (s *Scripts) Has(name string) bool {
	_, ok := s.m[name]
	return ok
}

// Map returns the source position (1-based line and column) of a
// position V8 reported in script name (1-based, in the wrapped code).
func (s *Scripts) Map(name string, line, col int) (int, int, bool) {
	sc := s.m[name]
	if sc == nil || sc.bad {
		return 0, 0, false
	}
	if sc.sm == nil {
		sm, err := ParseSourceMap([]byte(sc.mod.Map))
		if err != nil {
			sc.bad = true
			return 0, 0, false
		}
		sc.sm = sm
	}
	if line == 1 {
		col -= sc.head
	}
	return sc.mod.Original(sc.sm, line, col)
}

// Scripts returns the resolver's table of transformed scripts: a
// Resolver serves one process, and so does its table.
func (r *Resolver) Scripts() *Scripts { return &r.scripts }

// FileURL returns the file: URL of an absolute path as Node's
// url.pathToFileURL writes it: '%', '\\', newline, carriage return and
// tab, then what WHATWG's path percent-encode set holds (controls,
// space, '"', '#', '<', '>', '?', '`', '{', '}', DEL and non-ASCII bytes)
// are percent-encoded.
func FileURL(p string) string {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(p)+8)
	b = append(b, "file://"...)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c <= 0x20 || c >= 0x7f || c == '%' || c == '\\' || c == '"' || c == '#' || c == '<' || c == '>' ||
			c == '?' || c == '`' || c == '{' || c == '}':
			b = append(b, '%', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
