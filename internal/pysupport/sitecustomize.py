# secexec's start-up adjustments for CPython on WASI inside a VM. This
# file is on PYTHONPATH (a read-only layer); site imports it at start-up.
import os
import sys


def _secexec_start():
    # WASI has no working directory: wasi-libc starts at "/". The kernel
    # passes the process's directory in PWD, as for every WASI guest.
    pwd = os.environ.get("PWD", "")
    if pwd.startswith("/"):
        try:
            os.chdir(pwd)
        except OSError:
            pass
    # Pure-Python packages installed into the VM. Python sees nothing of
    # the VM under /usr (the module's embedded standard library shadows
    # it), so the system site directory is /lib/python3/dist-packages
    # (where a Debian python3-* package's usr/lib/python3/dist-packages
    # goes); the user's site directory works as usual.
    import site

    dirs = ["/lib/python3/dist-packages",
            os.path.expanduser("~/.local/lib/python%d.%d/site-packages" % sys.version_info[:2])]
    # A virtual environment (python3 -m venv): its bin/python launcher
    # names it in SECEXEC_PYVENV, since CPython for WASI cannot find
    # pyvenv.cfg beside its executable. Its site-packages replaces the
    # others unless it includes the system's. The variable is dropped so
    # that children run with a plain python3 are not in the environment
    # (they are when run with sys.executable, the launcher).
    venv = os.environ.pop("SECEXEC_PYVENV", "")
    cfg = os.path.join(venv, "pyvenv.cfg")
    if venv.startswith("/") and os.path.isfile(cfg):
        include = False
        try:
            with open(cfg, encoding="utf-8") as f:
                for line in f:
                    k, _, v = line.partition("=")
                    if k.strip() == "include-system-site-packages":
                        include = v.strip().lower() == "true"
        except OSError:
            pass
        sys.prefix = sys.exec_prefix = venv
        sys.executable = os.path.join(venv, "bin", "python")
        site.ENABLE_USER_SITE = False
        own = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
        dirs = [own] + (dirs[:1] if include else [])
    for d in dirs:
        if os.path.isdir(d):
            site.addsitedir(d)


def _secexec_relative_script():
    # CPython made a relative script path absolute against "/" before
    # this file ran, so it would not find the file: run it here instead,
    # as CPython would have (an absolute __file__, sys.argv[0] as typed,
    # the script's directory first on sys.path), and exit with its status.
    script = sys.argv[0] if sys.argv else ""
    if script in ("", "-c", "-m") or script.startswith("/") or not os.path.isfile(script):
        return
    import traceback

    path = os.path.abspath(script)
    sys.path[0:0] = [os.path.dirname(path)]
    main = sys.modules["__main__"]
    main.__file__, main.__cached__ = path, None
    code = 0
    try:
        with open(path, "rb") as f:
            source = f.read()
        exec(compile(source, path, "exec"), main.__dict__)
    except SystemExit as e:
        code = e.code
    except BaseException:
        exc = sys.exc_info()
        # Start the traceback at the script, as CPython does.
        tb = exc[2]
        while tb is not None and tb.tb_frame.f_code.co_filename != path and tb.tb_next is not None:
            tb = tb.tb_next
        traceback.print_exception(exc[0], exc[1], tb)
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    os._exit(code & 0xFF)


def _secexec_system(command):
    import subprocess

    return subprocess._secexec_system(command)


def _secexec_patch_asyncio(module):
    # The event loop resolves names in a thread pool, and CPython for WASI
    # has no threads: resolve in the loop instead (socket.getaddrinfo asks
    # the kernel; the loop waits for the answer).
    import socket

    async def getaddrinfo(self, host, port, *, family=0, type=0, proto=0, flags=0):
        return socket.getaddrinfo(host, port, family, type, proto, flags)

    async def getnameinfo(self, sockaddr, flags=0):
        return socket.getnameinfo(sockaddr, flags)

    module.BaseEventLoop.getaddrinfo = getaddrinfo
    module.BaseEventLoop.getnameinfo = getnameinfo


def _secexec_patch_socketserver(module):
    # ThreadingMixIn (ThreadingHTTPServer, python -m http.server) starts a
    # thread per request, which CPython for WASI cannot: serve each
    # request in turn instead.
    def process_request(self, request, client_address):
        self.process_request_thread(request, client_address)

    module.ThreadingMixIn.process_request = process_request


def _secexec_patch_selector_events(module):
    # asyncio's TLS runs OpenSSL over memory BIOs, which this CPython
    # lacks (no _ssl); secexec's ssl module has the kernel run TLS on the
    # socket instead. So a TLS transport is a plain socket transport over
    # a socket whose handshake the kernel did (one call, during which the
    # loop waits).
    def _make_ssl_transport(self, rawsock, protocol, sslcontext, waiter=None, *, server_side=False,
                            server_hostname=None, extra=None, server=None, **_timeouts):
        sslsock = sslcontext.wrap_socket(rawsock, server_side=server_side,
                                         server_hostname=server_hostname or None)
        extra = dict(extra or {})
        extra.update(sslcontext=sslcontext, ssl_object=sslsock, peercert=sslsock.getpeercert(),
                     cipher=sslsock.cipher(), compression=None)
        return self._make_socket_transport(sslsock, protocol, waiter, extra=extra, server=server)

    module.BaseSelectorEventLoop._make_ssl_transport = _make_ssl_transport


def _secexec_patch_threading(module):
    # CPython for WASI has no threads: _thread.start_new_thread always
    # fails, and CPython's message ("can't start new thread") reads like
    # a resource limit. Same exception type, a message that says why.
    start = module.Thread.start

    def start_thread(self):
        try:
            start(self)
        except RuntimeError as e:
            if str(e) != "can't start new thread":
                raise
            raise RuntimeError("can't start new thread: python3 in secexec (CPython for WASI) has no threads; "
                               "run the work in the main thread, or in another process with subprocess") from None

    module.Thread.start = start_thread


_secexec_patches = {
    "threading": _secexec_patch_threading,
    "asyncio.base_events": _secexec_patch_asyncio,
    "asyncio.selector_events": _secexec_patch_selector_events,
    "socketserver": _secexec_patch_socketserver,
}


class _SecexecPatchFinder:
    """Patches a few standard modules as they are imported, where they
    rely on threads (see the patch functions)."""

    def find_spec(self, name, path=None, target=None):
        patch = _secexec_patches.get(name)
        if patch is None:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _SecexecPatchingLoader(spec.loader, patch)
        return spec


class _SecexecPatchingLoader:
    def __init__(self, loader, patch):
        self._loader, self._patch = loader, patch

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)


# A parked instance (_secexec_park) starts in a template that holds none
# of the VM: what depends on the process is done when one claims it.
_secexec_parked = os.environ.get("SECEXEC_PYPARK") == "1" and sys.orig_argv[1:] == ["-c", "__import__('_secexec_park')._run()"]
if not _secexec_parked:
    _secexec_start()
sys.meta_path.insert(0, _SecexecPatchFinder())
if "threading" in sys.modules:
    _secexec_patch_threading(sys.modules["threading"])
# os.system runs through the subprocess shim (imported on first use).
os.system = _secexec_system
if not _secexec_parked:
    _secexec_relative_script()
del _secexec_parked
