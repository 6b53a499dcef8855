// Package nodecli parses the command line of node as secexec runs it.
package nodecli

import (
	"fmt"
	"strings"
)

// Mode is what a node command line asks to run.
type Mode string

// Modes of a node command line.
const (
	ModeEval    Mode = "eval"    // -e CODE
	ModePrint   Mode = "print"   // -p EXPR
	ModeFile    Mode = "file"    // FILE [args]
	ModeStdin   Mode = "stdin"   // no script: read it from stdin (or "-")
	ModeVersion Mode = "version" // -v / --version
	ModeHelp    Mode = "help"    // -h / --help
	ModeTest    Mode = "test"    // --test [patterns]: Args are the patterns
)

// Invocation is a parsed node command line.
type Invocation struct {
	Mode Mode
	// Code is the -e/-p source.
	Code string
	// File is the script of ModeFile, as given.
	File string
	// Args are the script's arguments (process.argv[2:] for a file,
	// argv[1:] for -e).
	Args []string
	// ExecArgv are the node options before the script.
	ExecArgv []string
	// Require lists -r/--require modules to preload.
	Require []string
	// InputType is --input-type (commonjs, module) for -e/-p/stdin.
	InputType string
	// NoWarnings is --no-warnings.
	NoWarnings bool
	// Dash is set when the script is "-": stdin, even on a terminal
	// (where no script starts the REPL).
	Dash bool
	// Interactive is -i: the REPL even when stdin is not a terminal.
	Interactive bool
}

// BadOptionError is a node command line node does not accept; node
// prints it and exits with status 9.
type BadOptionError struct{ Msg string }

func (e *BadOptionError) Error() string { return e.Msg }

// maxOptionArgs bounds the options parsed, so a hostile argv costs
// bounded work (the kernel already bounds argv to ArgvBytes).
const maxOptionArgs = 4096

// options that take a value, as separate argument or after '='.
var valueOptions = map[string]bool{
	"-e": true, "--eval": true, "-p": true, "--print": true, "-r": true, "--require": true,
	"--import": true, "--input-type": true, "--loader": true, "--experimental-loader": true,
	"--stack-size": true, "--max-old-space-size": true, "--title": true, "--conditions": true, "-C": true,
	"--unhandled-rejections": true, "--env-file": true, "--disable-warning": true, "--max-semi-space-size": true,
	"--dns-result-order": true, "--stack-trace-limit": true, "--redirect-warnings": true,
	"--test-name-pattern": true, "--test-skip-pattern": true, "--test-reporter": true,
	"--test-reporter-destination": true, "--test-concurrency": true, "--test-timeout": true,
	// tls.js reads it from execArgv (tls.DEFAULT_CIPHERS).
	"--tls-cipher-list": true,
}

// flagOptions are accepted and have no effect in the sandbox.
var flagOptions = map[string]bool{
	"--no-warnings": true, "--enable-source-maps": true, "--no-enable-source-maps": true, "--no-deprecation": true, "--trace-warnings": true,
	"--trace-uncaught": true, "--throw-deprecation": true, "--pending-deprecation": true, "--preserve-symlinks": true,
	"--experimental-vm-modules": true, "--experimental-modules": true, "--experimental-strip-types": true,
	"--experimental-transform-types": true, "--no-experimental-strip-types": true, "--experimental-detect-module": true,
	"--no-experimental-detect-module": true, "--experimental-require-module": true, "--no-experimental-fetch": true,
	"--harmony": true, "--use-strict": true, "--abort-on-uncaught-exception": true,
	// The bootstrap reads --expose-gc from execArgv (globalThis.gc).
	"--expose-gc":                          true,
	"--experimental-default-type=commonjs": true, "--experimental-specifier-resolution=node": true,
	"--no-addons": true, "--frozen-intrinsics": true, "--disallow-code-generation-from-strings": false,
	"--experimental-wasm-modules": true, "--experimental-json-modules": true, "--experimental-global-webcrypto": true,
	"--experimental-websocket": true, "--no-experimental-websocket": true, "--experimental-sqlite": true,
	"--experimental-print-required-tla": true, "--experimental-network-imports": true, "--test": false,
	"--test-only": true, "--test-force-exit": true,
	// V8's GC stress options change when collections happen, not what a
	// program computes.
	"--gc-interval": true, "--stress-compaction": true,
	// tls.js reads these from execArgv (tls.DEFAULT_MIN_VERSION and
	// DEFAULT_MAX_VERSION).
	"--tls-min-v1.0": true, "--tls-min-v1.1": true, "--tls-min-v1.2": true, "--tls-min-v1.3": true,
	"--tls-max-v1.2": true, "--tls-max-v1.3": true,
}

// Parse parses node's argv (argv[0] is the program name).
func Parse(argv []string) (*Invocation, error) {
	inv := &Invocation{Mode: ModeStdin}
	if len(argv) == 0 {
		return inv, nil
	}
	args := argv[1:]
	codeSet := false
	check := "" // -c or --check, as given
	seen := map[string]bool{}
	i := 0
	for ; i < len(args) && i < maxOptionArgs; i++ {
		a := args[i]
		if a == "-" {
			inv.Dash = true
			i++
			break
		}
		if a == "--" {
			i++
			if !codeSet && i < len(args) {
				inv.Mode = ModeFile
				inv.File = args[i]
				i++
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "" {
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") {
			hasVal = false
			name = a
		} else {
			// Node (and V8) take underscores for dashes in option names:
			// --abort_on_uncaught_exception is --abort-on-uncaught-exception.
			name = "--" + strings.ReplaceAll(name[2:], "_", "-")
		}
		if valueOptions[name] {
			if !hasVal {
				if i+1 >= len(args) {
					return nil, &BadOptionError{fmt.Sprintf("%s: %s requires an argument", argv0(argv), name)}
				}
				i++
				val = args[i]
			}
			// execArgv keeps the options as given, as Node's does:
			// --stack-size=256 stays one argument.
			if hasVal {
				inv.ExecArgv = append(inv.ExecArgv, a)
			} else {
				inv.ExecArgv = append(inv.ExecArgv, a, val)
			}
			switch name {
			case "-e", "--eval":
				inv.Mode, inv.Code, codeSet = ModeEval, val, true
			case "-p", "--print":
				inv.Mode, inv.Code, codeSet = ModePrint, val, true
			case "-r", "--require", "--import":
				inv.Require = append(inv.Require, val)
			case "--input-type":
				if val != "commonjs" && val != "module" && val != "module-typescript" && val != "commonjs-typescript" {
					return nil, &BadOptionError{fmt.Sprintf("%s: --input-type must be \"module\" or \"commonjs\"", argv0(argv))}
				}
				inv.InputType = val
			}
			continue
		}
		switch {
		case name == "-v" || name == "--version":
			inv.Mode = ModeVersion
			return inv, nil
		case name == "-h" || name == "--help":
			inv.Mode = ModeHelp
			return inv, nil
		case name == "-pe" || name == "-ep":
			if i+1 >= len(args) {
				return nil, &BadOptionError{fmt.Sprintf("%s: %s requires an argument", argv0(argv), name)}
			}
			i++
			inv.Mode, inv.Code, codeSet = ModePrint, args[i], true
			inv.ExecArgv = append(inv.ExecArgv, name, args[i])
			continue
		case name == "--no-warnings":
			inv.NoWarnings = true
		case name == "--experimental-test-coverage" || name == "--experimental-test-module-mocks" ||
			name == "--experimental-test-snapshots" || name == "--experimental-test-isolation":
			// Coverage needs V8's inspector, and the others Node's loader hooks.
			return nil, &BadOptionError{fmt.Sprintf("%s: %s is not supported in this sandbox", argv0(argv), name)}
		case flagOptions[a] || flagOptions[name] || strings.HasPrefix(name, "--max-old-space-size") ||
			strings.HasPrefix(name, "--experimental-") || strings.HasPrefix(name, "--no-experimental-"):
		case name == "-i" || name == "--interactive":
			inv.Interactive = true
		case name == "--inspect" || strings.HasPrefix(name, "--inspect") || strings.HasPrefix(name, "--debug"):
			return nil, &BadOptionError{fmt.Sprintf("%s: the inspector is not available in this sandbox", argv0(argv))}
		case name == "--test":
			inv.Mode, codeSet = ModeTest, true
		case name == "-c" || name == "--check":
			// Refused after the whole line is read: with -e node names
			// the conflict first.
			check = name
		case name == "--watch":
			return nil, &BadOptionError{fmt.Sprintf("%s: %s is not supported in this sandbox", argv0(argv), name)}
		default:
			return nil, &BadOptionError{fmt.Sprintf("%s: bad option: %s", argv0(argv), a)}
		}
		seen[name] = true
		inv.ExecArgv = append(inv.ExecArgv, a)
	}
	if seen["--tls-min-v1.3"] && seen["--tls-max-v1.2"] {
		return nil, &BadOptionError{fmt.Sprintf("%s: either --tls-min-v1.3 or --tls-max-v1.2 can be used, not both", argv0(argv))}
	}
	if check != "" {
		if inv.Mode == ModeEval || inv.Mode == ModePrint {
			return nil, &BadOptionError{fmt.Sprintf("%s: either --check or --eval can be used, not both", argv0(argv))}
		}
		return nil, &BadOptionError{fmt.Sprintf("%s: %s is not supported in this sandbox", argv0(argv), check)}
	}
	if i >= maxOptionArgs && i < len(args) {
		return nil, &BadOptionError{fmt.Sprintf("%s: too many options", argv0(argv))}
	}
	rest := args[i:]
	if !codeSet && inv.Mode != ModeFile && len(rest) > 0 && (i == 0 || args[i-1] != "-") {
		inv.Mode = ModeFile
		inv.File = rest[0]
		rest = rest[1:]
	}
	inv.Args = append([]string(nil), rest...)
	if inv.Interactive && (inv.Mode != ModeStdin || inv.Dash) {
		// node runs the script first and then the REPL; only the REPL
		// alone is supported here.
		return nil, &BadOptionError{fmt.Sprintf("%s: -i with a script is not supported in this sandbox", argv0(argv))}
	}
	return inv, nil
}

func argv0(argv []string) string {
	if len(argv) == 0 || argv[0] == "" {
		return "node"
	}
	return argv[0]
}
