// Package pysupport provides the guest-side support files of the python3
// command (CPython for WASI, software.PythonPin): a read-only layer that
// puts them at software.PythonSupportDir, which the command's processes
// find on PYTHONPATH.
//
// sitecustomize.py adapts CPython to the VM at start-up: it moves to the
// working directory the kernel passes in PWD (wasi-libc starts at "/"),
// adds the VM's site directories for pure-Python packages
// (/usr/lib/python3/dist-packages and the user's site-packages), and runs
// a script named by a relative path, which CPython would otherwise look
// for under "/", and patches asyncio and socketserver where they need
// threads, which CPython for WASI lacks. subprocess.py shadows the
// standard module and runs commands through the spawn device at
// DevicePath (spawn.go), since CPython on WASI cannot fork or exec. socket.py, _secexec_socket.py and
// ssl.py give it sockets and TLS on the kernel's network through the net
// device at NetDevicePath (netdev.go, tlsdev.go), since WASI preview 1
// cannot create sockets and the build has no _ssl.
package pysupport

import (
	_ "embed"
	"path"

	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

var (
	//go:embed sitecustomize.py
	siteCustomize []byte
	//go:embed subprocess.py
	subprocessShim []byte
	//go:embed sqlite3shell.py
	sqliteShell []byte
	//go:embed sqlite3extra.py
	sqliteExtra []byte
	//go:embed socket.py
	socketShim []byte
	//go:embed _secexec_socket.py
	socketImpl []byte
	//go:embed ssl.py
	sslShim []byte
	//go:embed _secexec_pip.py
	pipImpl []byte
	//go:embed _secexec_venv.py
	venvImpl []byte
	//go:embed _secexec_stdlib.py
	stdlibImpl []byte
	//go:embed _secexec_park.py
	parkImpl []byte
)

// pipMain runs secexec's pip: "python3 -m pip" and the pip commands.
const pipMain = "import sys\nfrom _secexec_pip import main\nsys.exit(main())\n"

// DevicePath is the spawn device's guest path (see spawn.go).
const DevicePath = "/opt/secexec/spawn"

// Files returns the support files by guest path.
func Files() map[string][]byte {
	return map[string][]byte{
		path.Join(software.PythonSupportDir, "sitecustomize.py"): siteCustomize,
		path.Join(software.PythonSupportDir, "subprocess.py"):    subprocessShim,
		SqliteProgram: sqliteShell,
		path.Join(software.PythonSupportDir, "sqlite3extra.py"):    sqliteExtra,
		path.Join(software.PythonSupportDir, "socket.py"):          socketShim,
		path.Join(software.PythonSupportDir, "_secexec_socket.py"): socketImpl,
		path.Join(software.PythonSupportDir, "ssl.py"):             sslShim,
		path.Join(software.PythonSupportDir, "_secexec_pip.py"):    pipImpl,
		path.Join(software.PythonSupportDir, "pip/__init__.py"):    []byte("# secexec's pip: the installer is _secexec_pip.\n"),
		PipProgram:     []byte(pipMain),
		pipLauncher:    []byte(pipRun),
		sqliteLauncher: []byte(sqliteRun),
		path.Join(software.PythonSupportDir, "_secexec_venv.py"):   venvImpl,
		path.Join(software.PythonSupportDir, "_secexec_stdlib.py"): stdlibImpl,
		path.Join(software.PythonSupportDir, "_secexec_park.py"):   parkImpl,
		path.Join(software.PythonSupportDir, "venv/__init__.py"):   []byte("from _secexec_venv import create, main  # noqa: F401\n"),
		path.Join(software.PythonSupportDir, "venv/__main__.py"):   []byte("import sys\nfrom _secexec_venv import main\nsys.exit(main())\n"),
	}
}

// SqlitePath is the guest path of the sqlite3 command, and SqliteProgram
// the Python program it runs.
const (
	SqlitePath    = "/usr/bin/sqlite3"
	SqliteProgram = software.PythonSupportDir + "/sqlite3shell.py"
)

// The launchers' scripts: CPython compiles a script it runs from source
// every time (it caches only imported modules' bytecode), so the "#!"
// launchers run these few lines, which import the programs from their
// pycs (bytecode.go) instead of running 1,500-line scripts.
const (
	pipLauncher    = software.PythonSupportDir + "/_secexec_pip_run.py"
	sqliteLauncher = software.PythonSupportDir + "/_secexec_sqlite3_run.py"
	// The launcher's argv: python3, this script, the launcher's path,
	// the arguments.
	pipRun    = "import sys\nfrom _secexec_pip import main\nsys.exit(main(sys.argv[2:]))\n"
	sqliteRun = "from sqlite3shell import run\nrun()\n"
)

// PipProgram is the program of "python3 -m pip" and the pip commands
// (PipPaths): secexec's installer of pure-Python wheels.
const PipProgram = software.PythonSupportDir + "/pip/__main__.py"

// PipPaths are the guest paths of the pip commands.
var PipPaths = []string{"/usr/bin/pip", "/usr/bin/pip3"}

// Commands returns the executable files of the layer by guest path: "#!"
// launchers of programs in the support directory.
func Commands() map[string][]byte {
	pip := []byte("#!/usr/bin/python3 " + pipLauncher + "\n# secexec's pip: python3 -m pip.\n")
	return map[string][]byte{
		PipPaths[0]: pip,
		PipPaths[1]: pip,
		SqlitePath: []byte("#!/usr/bin/python3 " + sqliteLauncher + "\n" +
			"# secexec's sqlite3: " + SqliteProgram + ", on the SQLite library of python3.\n"),
	}
}

// Layer returns a read-only filesystem (to be used as a lower layer of
// VMs' roots) holding the support files, the commands and the devices.
func Layer() vfs.FileSystem { return LayerWith(nil) }

// LayerWith returns Layer with the bytecode of bc (nil: none) beside the
// sources: the standard library's under StdlibDir, the support files' in
// their __pycache__ directories (bytecode.go).
func LayerWith(bc *Bytecode) vfs.FileSystem {
	files := Files()
	if bc != nil {
		for p, b := range bc.files {
			files[p] = b
		}
	}
	return newLayer(files, Commands(), map[string]device{
		DevicePath:    {DeviceNumber, func() vfs.Handle { return &spawnHandle{} }},
		NetDevicePath: {NetDeviceNumber, func() vfs.Handle { return &netHandle{} }},
	})
}
