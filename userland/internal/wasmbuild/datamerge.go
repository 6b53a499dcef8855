package wasmbuild

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/secexec/secexec/internal/wasmbin"
)

// Go's linker writes a module's initial memory as one active data
// segment per run of non-zero bytes: tens of thousands of them (53,493
// for the shell). A runtime evaluates each segment's offset expression
// and copies it at every instantiation, which made applying the data the
// largest single cost of starting a Go guest. MergeDataSegments rewrites
// the data section so that segments separated by at most maxGap zero
// bytes become one (the gap written out as zeros): the memory image is
// identical, the module a little larger, the segments a handful.

// ErrUnsupportedData is returned for a data section MergeDataSegments
// does not rewrite (passive segments, non-constant offsets, other
// memories); such a module is left to the caller to use unchanged.
var ErrUnsupportedData = errors.New("wasmbuild: data section not mergeable")

type dataSegment struct {
	offset uint32
	data   []byte
}

// MergeDataSegments returns module with its active data segments on
// memory 0 merged where at most maxGap bytes apart.
func MergeDataSegments(module []byte, maxGap int) ([]byte, error) {
	if len(module) < 8 || !bytes.Equal(module[:4], []byte("\x00asm")) {
		return nil, fmt.Errorf("wasmbuild: not a WebAssembly module")
	}
	out := append([]byte(nil), module[:8]...)
	var dataCountAt = -1
	var merged int
	i := 8
	for i < len(module) {
		id := module[i]
		size, n, err := wasmbin.ReadULEB(module[i+1:])
		if err != nil {
			return nil, err
		}
		start := i + 1 + n
		end := start + int(size)
		if end > len(module) || end < start {
			return nil, fmt.Errorf("wasmbuild: section %d overruns the module", id)
		}
		body := module[start:end]
		switch id {
		case 11:
			segs, err := parseData(body)
			if err != nil {
				return nil, err
			}
			if segs, err = mergeSegments(segs, maxGap); err != nil {
				return nil, err
			}
			merged = len(segs)
			out = wasmbin.AppendSection(out, 11, encodeData(segs))
		case 12:
			dataCountAt = len(out)
			out = wasmbin.AppendSection(out, 12, wasmbin.AppendULEB(nil, 0)) // patched below
		default:
			out = append(out, module[i:end]...)
		}
		i = end
	}
	if dataCountAt >= 0 {
		// The data count section precedes the data section; rewrite it
		// with the new count (its size may change, so rebuild).
		head := slices.Clone(out[:dataCountAt])
		_, n, _ := wasmbin.ReadULEB(out[dataCountAt+1:])
		oldLen := 1 + n + 1 // id, size, one-byte count 0
		rest := out[dataCountAt+oldLen:]
		out = append(wasmbin.AppendSection(head, 12, wasmbin.AppendULEB(nil, uint64(merged))), rest...)
	}
	return out, nil
}

func parseData(body []byte) ([]dataSegment, error) {
	count, n, err := wasmbin.ReadULEB(body)
	if err != nil {
		return nil, err
	}
	p := n
	// Each segment takes at least 5 bytes: bound the count before
	// allocating for it.
	if count > uint64(len(body)) {
		return nil, fmt.Errorf("wasmbuild: data section claims %d segments in %d bytes", count, len(body))
	}
	segs := make([]dataSegment, 0, count)
	for k := uint64(0); k < count; k++ {
		if p >= len(body) {
			return nil, fmt.Errorf("wasmbuild: data section truncated")
		}
		flag, n, err := wasmbin.ReadULEB(body[p:])
		if err != nil {
			return nil, err
		}
		p += n
		if flag != 0 {
			return nil, ErrUnsupportedData
		}
		// Offset: i32.const N end.
		if p >= len(body) || body[p] != 0x41 {
			return nil, ErrUnsupportedData
		}
		off, n, err := wasmbin.ReadSLEB32(body[p+1:])
		if err != nil {
			return nil, err
		}
		p += 1 + n
		if p >= len(body) || body[p] != 0x0b || off < 0 {
			return nil, ErrUnsupportedData
		}
		p++
		ln, n, err := wasmbin.ReadULEB(body[p:])
		if err != nil {
			return nil, err
		}
		p += n
		if uint64(len(body)-p) < ln {
			return nil, fmt.Errorf("wasmbuild: data segment truncated")
		}
		segs = append(segs, dataSegment{offset: uint32(off), data: body[p : p+int(ln)]})
		p += int(ln)
	}
	if p != len(body) {
		return nil, fmt.Errorf("wasmbuild: %d stray bytes after the data segments", len(body)-p)
	}
	return segs, nil
}

// mergeSegments applies the segments in order to an image, as
// instantiation would (later segments win where they overlap), then cuts
// the image at runs of more than maxGap untouched bytes.
func mergeSegments(segs []dataSegment, maxGap int) ([]dataSegment, error) {
	if len(segs) == 0 {
		return nil, nil
	}
	lo, hi := uint64(segs[0].offset), uint64(0)
	for _, s := range segs {
		lo = min(lo, uint64(s.offset))
		hi = max(hi, uint64(s.offset)+uint64(len(s.data)))
	}
	if hi-lo > maxImage {
		return nil, ErrUnsupportedData
	}
	img := make([]byte, hi-lo)
	set := make([]bool, hi-lo)
	for _, s := range segs {
		o := uint64(s.offset) - lo
		copy(img[o:], s.data)
		for j := range s.data {
			set[o+uint64(j)] = true
		}
	}
	var out []dataSegment
	j := 0
	for j < len(img) {
		if !set[j] {
			j++
			continue
		}
		start, last := j, j
		for k := j; k < len(img); k++ {
			if set[k] {
				last = k
				continue
			}
			if k-last > maxGap {
				break
			}
		}
		out = append(out, dataSegment{offset: uint32(lo) + uint32(start), data: img[start : last+1]})
		j = last + 1
	}
	return out, nil
}

// maxImage bounds the span of memory the segments may cover (a module is
// at most 256 MiB anyway, agentOS ABI §7.1.3).
const maxImage = 256 << 20

func encodeData(segs []dataSegment) []byte {
	b := wasmbin.AppendULEB(nil, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, 0x41)
		b = wasmbin.AppendSLEB(b, int64(int32(s.offset)))
		b = append(b, 0x0b)
		b = wasmbin.AppendULEB(b, uint64(len(s.data)))
		b = append(b, s.data...)
	}
	return b
}
