# secexec: the standard library's subprocess module, with Popen running
# commands through the VM's spawn device, because CPython on WASI can
# neither fork nor exec. This file shadows the standard module (it comes
# first on sys.path), loads the real one into itself, and replaces Popen.
#
# Semantics: a command runs to completion, with its output captured, at
# the first wait, poll, communicate or read of its output (or when the
# Popen is left or collected), then Popen reports the result. Everything built on
# Popen works (run, call, check_call, check_output, getoutput, Popen with
# communicate, wait, poll, p.stdout.read() and iteration, timeouts), but a
# child cannot be talked to interactively: writes to p.stdin are gathered
# and delivered as its whole input. A child whose stdin is not a pipe or
# a file gets empty input. stderr=STDOUT interleaves as the child wrote.
import _secexec_stdlib


exec(_secexec_stdlib.code("subprocess"), globals())

import base64 as _base64  # noqa: E402
import errno as _errno  # noqa: E402
import io as _io  # noqa: E402
import json as _json  # noqa: E402

_DEVICE = "/opt/secexec/spawn"


def _secexec_spawn(argv, env, cwd, data, merge, timeout):
    req = {
        "argv": argv,
        "env": env,
        "cwd": cwd,
        "stdin": _base64.b64encode(data).decode("ascii"),
        "merge_stderr": merge,
        "timeout_ms": max(1, int(timeout * 1000)) if timeout is not None else 0,
    }
    fd = os.open(_DEVICE, os.O_RDWR)
    try:
        view = memoryview(_json.dumps(req).encode("utf-8"))
        while view:
            view = view[os.write(fd, view):]
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    return _json.loads(b"".join(chunks))


class _StdinPipe:
    """p.stdin: gathers what is written; the child gets it all as input."""

    def __init__(self, text, encoding, errors):
        self._buf = bytearray()
        self._text, self._encoding, self._errors = text, encoding, errors
        self.closed = False

    def write(self, data):
        if self.closed:
            raise ValueError("write to closed file")
        if self._text:
            data = data.encode(self._encoding, self._errors)
        self._buf += data
        return len(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def close(self):
        self.closed = True

    def fileno(self):
        raise _io.UnsupportedOperation("secexec: a subprocess pipe has no descriptor")


class _LazyOutput:
    """p.stdout / p.stderr of a command whose input is still open: the
    command runs at the first read."""

    def __init__(self, popen, which):
        self._popen, self._which = popen, which

    def _stream(self):
        self._popen._secexec_run()
        return getattr(self._popen, self._which)

    def __getattr__(self, name):
        return getattr(self._stream(), name)

    def __iter__(self):
        return iter(self._stream())


class Popen:
    """Popen over the spawn device (see the module comment)."""

    def __init__(self, args, bufsize=-1, executable=None, stdin=None, stdout=None, stderr=None,
                 preexec_fn=None, close_fds=True, shell=False, cwd=None, env=None,
                 universal_newlines=None, startupinfo=None, creationflags=0, restore_signals=True,
                 start_new_session=False, pass_fds=(), *, user=None, group=None, extra_groups=None,
                 encoding=None, errors=None, text=None, umask=-1, pipesize=-1, process_group=None):
        self.args = args
        self.returncode = None
        self.pid = None
        self.text_mode = bool(encoding or errors or text or universal_newlines)
        self.encoding = encoding or ("utf-8" if self.text_mode else None)
        self.errors = errors or "strict"
        if isinstance(args, (str, bytes, os.PathLike)):
            args = [args]
        else:
            args = list(args)
        args = [os.fsdecode(a) for a in args]
        if shell:
            args = ["/bin/sh", "-c"] + args
            if executable:
                args[0] = os.fsdecode(executable)
        elif executable:
            args = [os.fsdecode(executable)] + args[1:]
        self._argv = args
        source = os.environ if env is None else env
        self._env = [os.fsdecode(k) + "=" + os.fsdecode(v) for k, v in source.items()]
        self._cwd = os.path.abspath(os.fsdecode(cwd)) if cwd is not None else os.getcwd()
        self._out_spec, self._err_spec = stdout, stderr
        self._timeout_error = None
        self.stdin = self.stdout = self.stderr = None
        self._input = b""
        if stdin == PIPE:
            self.stdin = _StdinPipe(self.text_mode, self.encoding, self.errors)
        elif stdin is not None and stdin != DEVNULL:
            self._input = self._read_input(stdin)
        if stdout == PIPE:
            self.stdout = _LazyOutput(self, "stdout")
        if stderr == PIPE:
            self.stderr = _LazyOutput(self, "stderr")
        self._secexec_pending = True

    @staticmethod
    def _read_input(src):
        if isinstance(src, int):
            chunks = []
            while True:
                b = os.read(src, 1 << 16)
                if not b:
                    return b"".join(chunks)
                chunks.append(b)
        data = src.read()
        return data.encode() if isinstance(data, str) else data

    def _decode(self, data):
        if data is None or not self.text_mode:
            return data
        return data.decode(self.encoding, self.errors).replace("\r\n", "\n").replace("\r", "\n")

    @staticmethod
    def _deliver(spec, data, fd):
        # Output that was not captured goes where the spec says, by
        # default to this process's descriptor fd (not through sys.stdout's
        # buffer: the child would have written to the descriptor itself).
        if spec is None:
            spec = fd
        if spec == DEVNULL:
            return
        if isinstance(spec, int):
            view = memoryview(data)
            while view:
                view = view[os.write(spec, view):]
            return
        try:
            spec.buffer.write(data) if hasattr(spec, "buffer") else spec.write(data)
        except TypeError:
            spec.write(data.decode("utf-8", "replace"))
        spec.flush()

    def _secexec_run(self, timeout=None):
        if not self._secexec_pending:
            if self._timeout_error is not None and self.returncode is None:
                raise self._timeout_error
            return
        self._secexec_pending = False
        if self.stdin is not None:
            self._input = bytes(self.stdin._buf)
            self.stdin.closed = True
        merge = self._err_spec == STDOUT
        resp = _secexec_spawn(self._argv, self._env, self._cwd, self._input, merge, timeout)
        if resp.get("error"):
            code = getattr(_errno, resp["error"], _errno.EIO)
            raise OSError(code, os.strerror(code), self._argv[0])
        self.pid = resp.get("pid")
        out = _base64.b64decode(resp.get("stdout") or "")
        err = _base64.b64decode(resp.get("stderr") or "")
        if not resp.get("timed_out"):
            self.returncode = resp["status"]
        if self._out_spec == PIPE:
            self.stdout = self._wrap(out)
        else:
            self._deliver(self._out_spec, out, 1)
        if self._err_spec == PIPE:
            self.stderr = self._wrap(err)
        elif not merge:
            self._deliver(self._err_spec, err, 2)
        if resp.get("timed_out"):
            self._timeout_error = TimeoutExpired(self.args, timeout, out if self._out_spec == PIPE else None,
                                                 err if self._err_spec == PIPE else None)
            raise self._timeout_error

    def _wrap(self, data):
        stream = _io.BytesIO(data)
        if self.text_mode:
            return _io.TextIOWrapper(stream, encoding=self.encoding, errors=self.errors)
        return stream

    def communicate(self, input=None, timeout=None):
        if input is not None and self.stdin is not None and not self.stdin.closed:
            self.stdin.write(input)
        self._secexec_run(timeout)
        out = self.stdout.read() if self._out_spec == PIPE else None
        err = self.stderr.read() if self._err_spec == PIPE else None
        return out, err

    def wait(self, timeout=None):
        self._secexec_run(timeout)
        return self.returncode

    def poll(self):
        return self.wait()

    def send_signal(self, sig):
        # Only a command that timed out is still "running": the device
        # killed it already.
        if self.returncode is None and self._timeout_error is not None:
            self.returncode = -9

    def terminate(self):
        self.send_signal(15)

    def kill(self):
        self.send_signal(9)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, value, traceback):
        if exc_type is None:
            self.wait()

    def __del__(self):
        # A Popen nobody waited for still runs, as a real child would.
        if getattr(self, "_secexec_pending", False):
            try:
                self._secexec_run()
            except Exception:
                pass

    def __repr__(self):
        return "<%s: returncode: %s args: %r>" % (self.__class__.__name__, self.returncode, self.args)


def _secexec_system(command):
    """os.system for WASI: runs the command with the shell, output
    passed through; returns a wait status as os.system does."""
    try:
        code = call(command, shell=True)
    except OSError:
        return 127 << 8
    return (code & 0xFF) << 8

