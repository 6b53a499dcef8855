package pysupport

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/software"
)

// A fingerprint changes with the module, with any support source, and
// with nothing else: the cache key that invalidates old bytecode.
func TestBytecodeFingerprint(t *testing.T) {
	a := software.FingerprintOf([]byte("module a"))
	b := software.FingerprintOf([]byte("module b"))
	fa := BytecodeFingerprint(a)
	if fa != BytecodeFingerprint(a) {
		t.Fatal("fingerprint is not stable")
	}
	if fa == BytecodeFingerprint(b) {
		t.Fatal("another python module has the same bytecode fingerprint")
	}
	restore := SetSiteCustomizeForTest(append([]byte("# changed\n"), siteCustomize...))
	changed := BytecodeFingerprint(a)
	restore()
	if changed == fa {
		t.Fatal("a changed support source has the same bytecode fingerprint")
	}
	if BytecodeFingerprint(a) != fa {
		t.Fatal("restored source, different fingerprint")
	}
}

// A stored set loads only for its own module; a set stored for another
// module, or none, is missing (os.ErrNotExist), and a damaged file is
// ErrBytecode.
func TestBytecodeLoadKeyed(t *testing.T) {
	dir := t.TempDir()
	mod := software.FingerprintOf([]byte("module"))
	files := map[string][]byte{
		StdlibDir + "/json/__init__.pyc":                               []byte("json"),
		software.PythonSupportDir + "/__pycache__/ssl.cpython-312.pyc": []byte("ssl"),
	}
	if err := writeBytecode(dir, BytecodeFingerprint(mod), files); err != nil {
		t.Fatal(err)
	}
	bc, err := LoadBytecode(dir, mod)
	if err != nil {
		t.Fatal(err)
	}
	if bc.Len() != 2 || string(bc.files[StdlibDir+"/json/__init__.pyc"]) != "json" {
		t.Fatalf("loaded %v", bc.files)
	}
	if _, err := LoadBytecode(dir, software.FingerprintOf([]byte("other module"))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("another module's bytecode: %v, want os.ErrNotExist", err)
	}
	if err := os.WriteFile(BytecodePath(dir, mod), []byte("/etc/passwd.pyc\x003\x00abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBytecode(dir, mod); !errors.Is(err, ErrBytecode) {
		t.Fatalf("damaged set: %v, want ErrBytecode", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".bytecode-*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// Framing that a damaged or hostile cache file could hold is refused
// with an error, never a panic or a file outside the bytecode directories.
func TestBytecodeParseRefuses(t *testing.T) {
	ok := StdlibDir + "/os.pyc\x002\x00ab"
	if _, err := parseBytecode([]byte(ok)); err != nil {
		t.Fatalf("valid set refused: %v", err)
	}
	for name, in := range map[string]string{
		"empty":                "",
		"truncated path":       StdlibDir + "/os.pyc",
		"truncated size":       StdlibDir + "/os.pyc\x002",
		"size past end":        StdlibDir + "/os.pyc\x009\x00ab",
		"negative size":        StdlibDir + "/os.pyc\x00-1\x00ab",
		"not a number":         StdlibDir + "/os.pyc\x00x\x00ab",
		"outside":              "/etc/os.pyc\x002\x00ab",
		"dot-dot":              StdlibDir + "/../python/x.pyc\x002\x00ab",
		"relative":             "opt/secexec/python-stdlib/os.pyc\x002\x00ab",
		"not a pyc":            StdlibDir + "/os.py\x002\x00ab",
		"support, no cache":    software.PythonSupportDir + "/socket.pyc\x002\x00ab",
		"duplicate":            ok + ok,
		"stdlib dir lookalike": StdlibDir + "x/os.pyc\x002\x00ab",
	} {
		if _, err := parseBytecode([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var many strings.Builder
	for i := range maxBytecodeFiles + 1 {
		many.WriteString(StdlibDir + "/" + strconv.Itoa(i) + ".pyc\x000\x00")
	}
	if _, err := parseBytecode([]byte(many.String())); err == nil {
		t.Error("more files than the bound: accepted")
	}
	if _, err := parseBytecode(make([]byte, maxBytecodeBytes+1)); err == nil {
		t.Error("more bytes than the bound: accepted")
	}
}

// Builds for other modules or sources do not pile up: the directory keeps
// the newest keptBytecode sets, the one just written among them.
func TestBytecodePruned(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{StdlibDir + "/os.pyc": []byte("os")}
	var last software.Fingerprint
	for i := range keptBytecode + 3 {
		last = software.FingerprintOf([]byte{byte(i)})
		if err := writeBytecode(dir, BytecodeFingerprint(last), files); err != nil {
			t.Fatal(err)
		}
		// Distinct times, whatever the filesystem's resolution.
		old := time.Now().Add(time.Duration(i-100) * time.Minute)
		if err := os.Chtimes(BytecodePath(dir, last), old, old); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "bytecode-*"))
	if len(names) != keptBytecode {
		t.Fatalf("%d sets kept, want %d", len(names), keptBytecode)
	}
	if _, err := LoadBytecode(dir, last); err != nil {
		t.Fatalf("the newest set was pruned: %v", err)
	}
}
