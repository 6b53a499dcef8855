package kernel

import (
	"bytes"
	"context"
	"encoding/binary"
)

// Native executables (ELF, Mach-O, PE) cannot run in a VM: its programs
// are WebAssembly modules and the JavaScript runtime. npm packages that
// ship one (esbuild, swc, typescript 7's native build) spawn it and,
// when the spawn fails with a bare ENOEXEC, report something misleading
// ("the package could not be found", "runner.js not found"). Such a file
// is therefore "run" by a program that says in one line what happened
// and exits 126, as a shell does for a command it cannot execute.

// nativeFormat names the native executable format hdr starts with, or "".
func nativeFormat(hdr []byte) string {
	switch {
	case bytes.HasPrefix(hdr, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(hdr, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.HasPrefix(hdr, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.HasPrefix(hdr, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(hdr, []byte{0xcf, 0xfa, 0xed, 0xfe}):
		return "Mach-O"
	case bytes.HasPrefix(hdr, []byte("MZ")) && len(hdr) >= 0x40:
		// "MZ" alone could start a text file: a PE file's DOS header
		// points (e_lfanew, at 0x3c) at its "PE\0\0" signature.
		off := int(binary.LittleEndian.Uint32(hdr[0x3c:0x40]))
		if off >= 0x40 && off+4 <= len(hdr) && bytes.Equal(hdr[off:off+4], []byte("PE\x00\x00")) {
			return "PE"
		}
	}
	return ""
}

// nativeProgram is what a native executable runs as.
type nativeProgram struct {
	path, format string
}

// nativeExitCode is a shell's status for a command it found but cannot
// execute.
const nativeExitCode = 126

func (n nativeProgram) Run(ctx context.Context, p *Process) int {
	msg := n.path + ": cannot execute: a native " + n.format +
		" executable cannot run in the sandbox (it runs WebAssembly and JavaScript); use a WebAssembly build of the program, e.g. esbuild-wasm or @swc/wasm\n"
	_, _ = p.Write(ctx, 2, []byte(msg))
	return nativeExitCode
}
