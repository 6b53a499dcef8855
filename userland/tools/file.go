package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// fileHead is how much of a file is examined, as file(1) reads a fixed
// prefix (its default bytes limit is larger; this covers every test the
// detector makes except ELF, which reads the file itself, and a gzip's
// trailing size).
const fileHead = 1 << 20

// runFile is file 5.44 for the common kinds of files: its descriptions,
// -b, -L, --mime-type, -i (--mime) and the alignment of names in its
// output.
func runFile(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, names, err := getopt(args[1:], "bLhi", []string{"brief", "dereference", "no-dereference", "mime-type", "mime"})
	if err != nil {
		fmt.Fprintf(stderr, "file: %s\nUsage: file [-bLh] [--mime-type] file ...\n", err)
		return 1
	}
	brief, follow, mime := false, false, mimeOutNone
	for _, o := range opts {
		switch o.name {
		case "b", "brief":
			brief = true
		case "L", "dereference":
			follow = true
		case "h", "no-dereference":
			follow = false
		case "mime-type":
			mime = max(mime, mimeOutType)
		case "i", "mime":
			mime = mimeOutCharset
		}
	}
	if len(names) == 0 {
		// Only the options this file has are listed.
		fmt.Fprintln(stderr, "Usage: file [-bhiL] [--mime-type] [--mime] <file> ...")
		return 1
	}
	width := 0
	for _, n := range names {
		if n == "-" {
			n = "/dev/stdin"
		}
		width = max(width, len(n)+1)
	}
	for _, n := range names {
		desc := describeFile(n, stdin, follow, mime)
		shown := n
		if n == "-" {
			shown = "/dev/stdin"
		}
		if brief {
			fmt.Fprintln(stdout, desc)
		} else {
			fmt.Fprintf(stdout, "%-*s %s\n", width, shown+":", desc)
		}
	}
	return 0
}

// describeFile returns file's description of name (or its MIME type).
// What file prints: a description, the MIME type (--mime-type), or the
// type and the character set (-i, --mime).
const (
	mimeOutNone = iota
	mimeOutType
	mimeOutCharset
)

func describeFile(name string, stdin io.Reader, follow bool, mime int) string {
	pick := func(desc, mimeType string) string {
		switch mime {
		case mimeOutCharset:
			return mimeType + "; charset=binary"
		case mimeOutNone:
			return desc
		}
		return mimeType
	}
	var data []byte
	var f *os.File
	if name == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, fileHead))
		if err != nil {
			return pick("cannot read `/dev/stdin' ("+sysmsg.Text(err)+")", "application/x-not-regular-file")
		}
		data = b
	} else {
		fi, err := os.Lstat(name)
		if err != nil {
			return "cannot open `" + name + "' (" + sysmsg.Text(err) + ")"
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(name)
			if !follow {
				if _, err := os.Stat(name); err != nil {
					if mime != mimeOutNone {
						return "inode/symlink" // without a charset, as file has it
					}
					return pick("broken symbolic link to "+target, "inode/symlink")
				}
				return pick("symbolic link to "+target, "inode/symlink")
			}
			if fi, err = os.Stat(name); err != nil {
				return pick("cannot open `"+name+"' ("+sysmsg.Text(err)+")", "inode/symlink")
			}
		}
		switch {
		case fi.IsDir():
			return pick("directory", "inode/directory")
		case fi.Mode()&os.ModeNamedPipe != 0:
			return pick("fifo (named pipe)", "inode/fifo")
		case fi.Mode()&os.ModeSocket != 0:
			return pick("socket", "inode/socket")
		case fi.Mode()&os.ModeCharDevice != 0:
			return pick("character special", "inode/chardevice")
		case fi.Mode()&os.ModeDevice != 0:
			return pick("block special", "inode/blockdevice")
		}
		f, err = os.Open(name)
		if err != nil {
			return "cannot open `" + name + "' (" + sysmsg.Text(err) + ")"
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, fileHead))
		if err != nil {
			return pick("cannot read `"+name+"' ("+sysmsg.Text(err)+")", "application/x-not-regular-file")
		}
	}
	var ra io.ReaderAt = bytes.NewReader(data)
	size := int64(len(data))
	if f != nil {
		ra = f
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
	}
	desc, mimeType := classify(data, ra, size)
	if mime == mimeOutCharset {
		charset := "binary"
		if strings.HasPrefix(mimeType, "text/") || mimeType == "application/json" || mimeType == "application/javascript" {
			switch {
			case isASCIIText(data):
				charset = "us-ascii"
			case utf8.Valid(data):
				charset = "utf-8"
			default:
				charset = "iso-8859-1"
			}
		}
		return mimeType + "; charset=" + charset
	}
	if name != "-" && mime == mimeOutNone {
		// file names the special bits first ("setuid ELF 64-bit ...").
		if perm, ok := permOf(name, true); ok {
			prefix := ""
			if perm&os.ModeSetuid != 0 {
				prefix += "setuid "
			}
			if perm&os.ModeSetgid != 0 {
				prefix += "setgid "
			}
			if perm&os.ModeSticky != 0 {
				prefix += "sticky "
			}
			desc = prefix + desc
		}
	}
	return pick(desc, mimeType)
}

// classify names the content. ra reads the whole input (size bytes), for
// the formats whose description needs more than the head (ELF, gzip).
func classify(data []byte, ra io.ReaderAt, size int64) (string, string) {
	switch {
	case len(data) == 0:
		return "empty", "inode/x-empty"
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		if d, m, ok := describeELF(ra); ok {
			return d, m
		}
		return "ELF", "application/octet-stream"
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return describePNG(data), "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return describeJPEG(data), "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		d := "GIF image data, version " + string(data[3:6])
		if len(data) >= 10 {
			d += fmt.Sprintf(", %d x %d", binary.LittleEndian.Uint16(data[6:]), binary.LittleEndian.Uint16(data[8:]))
		}
		return d, "image/gif"
	case bytes.HasPrefix(data, []byte("\x1f\x8b")):
		return describeGzip(data, ra, size), "application/gzip"
	case bytes.HasPrefix(data, []byte("BZh")) && len(data) > 3 && data[3] >= '1' && data[3] <= '9':
		return fmt.Sprintf("bzip2 compressed data, block size = %c00k", data[3]), "application/x-bzip2"
	case bytes.HasPrefix(data, []byte("\xfd7zXZ\x00")):
		d := "XZ compressed data"
		if len(data) > 7 {
			switch data[7] & 0xf {
			case 0:
				d += ", checksum NONE"
			case 1:
				d += ", checksum CRC32"
			case 4:
				d += ", checksum CRC64"
			case 10:
				d += ", checksum SHA-256"
			}
		}
		return d, "application/x-xz"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && len(data) >= 10:
		v := binary.LittleEndian.Uint16(data[4:])
		d := fmt.Sprintf("Zip archive data, at least v%d.%d to extract", v/10, v%10)
		switch binary.LittleEndian.Uint16(data[8:]) {
		case 0:
			d += ", compression method=store"
		case 8:
			d += ", compression method=deflate"
		}
		return d, "application/zip"
	case bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return "Zip archive data (empty)", "application/zip"
	case len(data) >= 265 && string(data[257:265]) == "ustar  \x00":
		return "POSIX tar archive (GNU)", "application/x-tar"
	case len(data) >= 263 && string(data[257:263]) == "ustar\x00":
		return "POSIX tar archive", "application/x-tar"
	case bytes.HasPrefix(data, []byte("\x00asm")) && len(data) >= 8:
		v := binary.LittleEndian.Uint32(data[4:])
		d := fmt.Sprintf("WebAssembly (wasm) binary module version %#x", v)
		if v == 1 {
			d += " (MVP)"
		}
		return d, "application/wasm"
	}
	return describeText(data)
}

func describePNG(data []byte) string {
	d := "PNG image data"
	if len(data) < 29 || string(data[12:16]) != "IHDR" {
		return d
	}
	w, h := binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
	depth, color, interlace := data[24], data[25], data[28]
	d += fmt.Sprintf(", %d x %d, %d-bit", w, h, depth)
	switch color {
	case 0:
		d += " grayscale"
	case 2:
		d += "/color RGB"
	case 3:
		d += " colormap"
	case 4:
		d += " gray+alpha"
	case 6:
		d += "/color RGBA"
	}
	if interlace == 0 {
		return d + ", non-interlaced"
	}
	return d + ", interlaced"
}

func describeJPEG(data []byte) string {
	d := "JPEG image data"
	if len(data) >= 18 && data[3] == 0xe0 && string(data[6:11]) == "JFIF\x00" {
		d += fmt.Sprintf(", JFIF standard %d.%02d", data[11], data[12])
		switch data[13] {
		case 0:
			d += ", aspect ratio"
		case 1:
			d += ", resolution (DPI)"
		case 2:
			d += ", resolution (DPCM)"
		}
		d += fmt.Sprintf(", density %dx%d, segment length %d", binary.BigEndian.Uint16(data[14:]), binary.BigEndian.Uint16(data[16:]), binary.BigEndian.Uint16(data[4:]))
	}
	// Walk the segments to the frame header for the size.
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			break
		}
		marker := data[i+1]
		n := int(binary.BigEndian.Uint16(data[i+2:]))
		if (marker == 0xc0 || marker == 0xc1 || marker == 0xc2) && i+10 <= len(data) {
			kind := "baseline"
			switch marker {
			case 0xc1:
				kind = "extended sequential"
			case 0xc2:
				kind = "progressive"
			}
			d += fmt.Sprintf(", %s, precision %d, %dx%d, components %d", kind, data[i+4],
				binary.BigEndian.Uint16(data[i+7:]), binary.BigEndian.Uint16(data[i+5:]), data[i+9])
			break
		}
		if marker == 0xda || n < 2 {
			break
		}
		i += 2 + n
	}
	return d
}

func describeGzip(data []byte, ra io.ReaderAt, size int64) string {
	d := "gzip compressed data"
	if len(data) < 10 {
		return d
	}
	flags := data[3]
	mtime := binary.LittleEndian.Uint32(data[4:])
	rest := data[10:]
	if flags&4 != 0 && len(rest) >= 2 { // FEXTRA
		n := int(binary.LittleEndian.Uint16(rest))
		if len(rest) >= 2+n {
			rest = rest[2+n:]
		}
	}
	if flags&8 != 0 { // FNAME
		if i := bytes.IndexByte(rest, 0); i >= 0 {
			d += fmt.Sprintf(", was \"%s\"", rest[:i])
		}
	}
	if mtime != 0 {
		d += ", last modified: " + time.Unix(int64(mtime), 0).UTC().Format("Mon Jan _2 15:04:05 2006")
	}
	switch data[8] {
	case 2:
		d += ", max compression"
	case 4:
		d += ", max speed"
	}
	if data[9] == 3 {
		d += ", from Unix"
	}
	tail := make([]byte, 4)
	if _, err := ra.ReadAt(tail, size-4); size >= 4 && err == nil {
		d += fmt.Sprintf(", original size modulo 2^32 %d", binary.LittleEndian.Uint32(tail))
	}
	return d
}

func describeELF(f io.ReaderAt) (string, string, bool) {
	ef, err := elf.NewFile(f)
	if err != nil {
		return "", "", false
	}
	defer ef.Close()
	var b strings.Builder
	bits := "32"
	if ef.Class == elf.ELFCLASS64 {
		bits = "64"
	}
	order := "LSB"
	if ef.Data == elf.ELFDATA2MSB {
		order = "MSB"
	}
	interp := ""
	dynamic := false
	for _, p := range ef.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			if raw, err := io.ReadAll(io.LimitReader(p.Open(), 4096)); err == nil {
				interp = strings.TrimRight(string(raw), "\x00")
			}
		case elf.PT_DYNAMIC:
			dynamic = true
		}
	}
	kind, mimeType := "", "application/octet-stream"
	switch ef.Type {
	case elf.ET_REL:
		kind, mimeType = "relocatable", "application/x-object"
	case elf.ET_EXEC:
		kind, mimeType = "executable", "application/x-executable"
	case elf.ET_DYN:
		// file calls an ET_DYN a PIE executable only when DF_1_PIE says so
		// (libc has an interpreter too, and is a shared object).
		pie := false
		if vals, err := ef.DynValue(elf.DT_FLAGS_1); err == nil {
			for _, v := range vals {
				if v&uint64(elf.DF_1_PIE) != 0 {
					pie = true
				}
			}
		}
		if pie {
			kind, mimeType = "pie executable", "application/x-pie-executable"
		} else {
			kind, mimeType = "shared object", "application/x-sharedlib"
		}
	case elf.ET_CORE:
		kind, mimeType = "core file", "application/x-coredump"
	}
	fmt.Fprintf(&b, "ELF %s-bit %s %s, %s, version %d", bits, order, kind, elfMachine(ef.Machine), ef.Version)
	if ef.OSABI == elf.ELFOSABI_NONE || ef.OSABI == elf.ELFOSABI_LINUX {
		if ef.OSABI == elf.ELFOSABI_NONE {
			b.WriteString(" (SYSV)")
		} else {
			b.WriteString(" (GNU/Linux)")
		}
	}
	if ef.Type != elf.ET_REL && ef.Type != elf.ET_CORE {
		if dynamic {
			b.WriteString(", dynamically linked")
		} else {
			b.WriteString(", statically linked")
		}
	}
	if interp != "" {
		b.WriteString(", interpreter " + interp)
	}
	// The notes, in the order of their sections, as file lists them.
	for _, s := range ef.Sections {
		switch s.Name {
		case ".note.go.buildid", ".note.gnu.build-id", ".note.ABI-tag":
		default:
			continue
		}
		raw, err := s.Data()
		if err != nil || len(raw) <= 16 {
			continue
		}
		switch s.Name {
		case ".note.go.buildid":
			b.WriteString(", Go BuildID=" + strings.TrimRight(string(raw[16:]), "\x00"))
		case ".note.gnu.build-id":
			fmt.Fprintf(&b, ", BuildID[sha1]=%x", raw[16:])
		case ".note.ABI-tag":
			if len(raw) >= 32 && raw[16] == 0 {
				o := ef.ByteOrder
				fmt.Fprintf(&b, ", for GNU/Linux %d.%d.%d", o.Uint32(raw[20:]), o.Uint32(raw[24:]), o.Uint32(raw[28:]))
			}
		}
	}
	if ef.Section(".symtab") != nil {
		if ef.Section(".debug_info") != nil {
			b.WriteString(", with debug_info")
		}
		b.WriteString(", not stripped")
	} else {
		b.WriteString(", stripped")
	}
	return b.String(), mimeType, true
}

func elfMachine(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86-64"
	case elf.EM_386:
		return "Intel 80386"
	case elf.EM_AARCH64:
		return "ARM aarch64"
	case elf.EM_ARM:
		return "ARM"
	case elf.EM_RISCV:
		return "UCB RISC-V"
	}
	return strings.TrimPrefix(m.String(), "EM_")
}

// interpreters maps a script's interpreter to file's words and MIME type.
var interpreters = map[string][2]string{
	"sh":      {"POSIX shell script", "text/x-shellscript"},
	"bash":    {"Bourne-Again shell script", "text/x-shellscript"},
	"python":  {"Python script", "text/x-script.python"},
	"python3": {"Python script", "text/x-script.python"},
	"perl":    {"Perl script text", "text/x-perl"},
	"node":    {"Node.js script", "application/javascript"},
}

// interpreterName drops a version from an interpreter's name
// ("perl5.36-x86_64-linux-gnu" is perl, "python3.11" python3).
func interpreterName(prog string) string {
	if _, ok := interpreters[prog]; ok {
		return prog
	}
	end := 0
	for end < len(prog) && (prog[end] >= 'a' && prog[end] <= 'z') {
		end++
	}
	if _, ok := interpreters[prog[:end]+"3"]; ok && strings.HasPrefix(prog[end:], "3") {
		return prog[:end] + "3"
	}
	return prog[:end]
}

// describeText is file's text classification: the character set, then
// line terminators and the other remarks in file's order.
func describeText(data []byte) (string, string) {
	enc := ""
	switch {
	case isASCIIText(data):
		enc = "ASCII text"
	case utf8.Valid(data) && !hasControl(data):
		enc = "Unicode text, UTF-8 text"
	case isLatin1Text(data):
		enc = "ISO-8859 text"
	default:
		return "data", "application/octet-stream"
	}
	mimeType := "text/plain"
	if enc == "ASCII text" && looksJSON(data) {
		return "JSON text data", "application/json"
	}
	if bytes.HasPrefix(data, []byte("-----BEGIN CERTIFICATE-----")) {
		return "PEM certificate", mimeType
	}
	script := ""
	if bytes.HasPrefix(data, []byte("#!")) {
		line, _, _ := bytes.Cut(data[2:], []byte("\n"))
		fields := strings.Fields(string(line))
		if len(fields) > 0 {
			prog := fields[0][strings.LastIndexByte(fields[0], '/')+1:]
			viaEnv := prog == "env" && len(fields) > 1
			if viaEnv {
				prog = fields[1]
			}
			if viaEnv && prog == "sh" {
				script = "a sh script"
			} else if w, ok := interpreters[interpreterName(prog)]; ok {
				script, mimeType = w[0], w[1]
			} else {
				script = "a " + prog + " script"
			}
		}
	}
	var remarks []string
	crlf, lf, cr := 0, 0, 0
	longest, cur := 0, 0
	esc := false
	for i, c := range data {
		switch c {
		case '\n':
			if i > 0 && data[i-1] == '\r' {
				crlf++
			} else {
				lf++
			}
			longest, cur = max(longest, cur), 0
			continue
		case '\r':
			if i+1 >= len(data) || data[i+1] != '\n' {
				cr++
				longest, cur = max(longest, cur), 0
			}
			continue
		case 0x1b:
			esc = true
		}
		cur++
	}
	longest = max(longest, cur)
	if longest > 300 {
		remarks = append(remarks, fmt.Sprintf("with very long lines (%d)", longest))
	}
	switch {
	case crlf > 0 && lf == 0 && cr == 0:
		remarks = append(remarks, "with CRLF line terminators")
	case cr > 0 && lf == 0 && crlf == 0:
		remarks = append(remarks, "with CR line terminators")
	case crlf > 0 && lf > 0 && cr == 0:
		remarks = append(remarks, "with CRLF, LF line terminators")
	case crlf == 0 && lf == 0 && cr == 0:
		remarks = append(remarks, "with no line terminators")
	}
	if esc {
		remarks = append(remarks, "with escape sequences")
	}
	d := enc
	if len(remarks) > 0 {
		d += ", " + strings.Join(remarks, ", ")
	}
	switch {
	case script == "Node.js script":
		return script + " executable, " + d, mimeType
	case script == "Perl script text":
		return script + " executable", mimeType
	case script != "":
		return script + ", " + d + " executable", mimeType
	}
	return d, mimeType
}

// textByte reports whether file counts c as text in ASCII data: printable
// characters and the usual controls (BEL BS TAB LF VT FF CR ESC).
func textByte(c byte) bool {
	return c >= 0x20 && c < 0x7f || c >= 7 && c <= 13 || c == 0x1b
}

func isASCIIText(data []byte) bool {
	for _, c := range data {
		if !textByte(c) {
			return false
		}
	}
	return true
}

func hasControl(data []byte) bool {
	for _, c := range data {
		if c < 0x80 && !textByte(c) {
			return true
		}
	}
	return false
}

func isLatin1Text(data []byte) bool {
	for _, c := range data {
		if c < 0x80 && !textByte(c) || c >= 0x80 && c < 0xa0 {
			return false
		}
	}
	return true
}

// looksJSON is file's JSON test: an object or array that parses whole.
func looksJSON(data []byte) bool {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	return json.Valid(t)
}
