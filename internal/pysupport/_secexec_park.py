# secexec's parked interpreter (internal/wasm parked.go). An instance
# starts as `python3 -c "__import__('_secexec_park')._run()"` in a
# template that holds only the read-only support layers; site and
# sitecustomize ran, but nothing of a tenant's. _run then waits in a read
# of descriptor 0 for the process that claims the instance, whose
# command line, environment and directory arrive there, and makes the
# interpreter what CPython's own start-up would have made of them before
# it runs the program. The hash secret and random state were made by this
# instance's own start-up and no other process ever ran on it.
import os
import sys


def _claim():
    # "<size>\n" then the NUL-separated fields: directory, argc, argv,
    # environment.
    buf = b""
    while b"\n" not in buf:
        chunk = os.read(0, 65536)
        if not chunk:
            os._exit(70)
        buf += chunk
    head, _, body = buf.partition(b"\n")
    size = int(head)
    while len(body) < size:
        chunk = os.read(0, size - len(body))
        if not chunk:
            os._exit(70)
        body += chunk
    fields = body.split(b"\0")
    argc = int(fields[1])
    env = fields[2 + argc:]
    return fields[2:2 + argc], [kv for kv in env if kv]


def _environ(env):
    # As posix.environ is built: entries without "=" are skipped and the
    # first of a name wins; the C environment follows (tzset, children).
    os.environ.clear()
    data = os.environ._data
    for kv in env:
        k, eq, v = kv.partition(b"=")
        if not eq or k in data:
            continue
        data[k] = v
        try:
            os.putenv(k, v)
        except (ValueError, OSError):
            pass
    import time

    if hasattr(time, "tzset"):
        time.tzset()


def _stdio():
    # The streams CPython's start-up makes (create_stdio), on the claiming
    # process's descriptors: the encoding and error handlers start-up
    # chose from the same locale and PYTHONIOENCODING, line buffering
    # when a terminal, and stderr always.
    import io

    made = []
    for fd, name, mode, old in ((0, "<stdin>", "r", sys.__stdin__), (1, "<stdout>", "w", sys.__stdout__),
                                (2, "<stderr>", "w", sys.__stderr__)):
        try:
            os.fstat(fd)
        except OSError:
            made.append(None)
            continue
        buf = io.open(fd, mode + "b", -1, closefd=False)
        raw = buf.raw
        raw.name = name
        line = raw.isatty() or fd == 2
        stream = io.TextIOWrapper(buf, old.encoding, old.errors, "\n", line, False)
        stream.mode = mode
        made.append(stream)
    sys.stdin = sys.__stdin__ = made[0]
    sys.stdout = sys.__stdout__ = made[1]
    sys.stderr = sys.__stderr__ = made[2]


def _site():
    # site's user directories follow HOME (and PYTHONUSERBASE, which is the
    # image's); sitecustomize then does what it does at every start-up.
    import site

    site.USER_BASE = site.USER_SITE = None
    user = site.getusersitepackages()
    if site.ENABLE_USER_SITE and os.path.isdir(user):
        site.addsitedir(user)
    import sitecustomize

    sitecustomize._secexec_start()


def _path0(script):
    # CPython's sys.path[0] for a script: its directory, after symlinks.
    path = script
    for _ in range(40):
        try:
            link = os.readlink(path)
        except OSError:
            break
        path = link if link.startswith("/") else os.path.join(os.path.dirname(path), link)
    return os.path.dirname(path)


def _importer(path):
    # A directory or zip file runs its __main__ module.
    if os.path.isdir(path):
        return True
    import zipimport

    try:
        zipimport.zipimporter(path)
    except Exception:
        return False
    return True


def _script(argv0, script, main):
    filename = os.path.abspath(script)
    if _importer(filename):
        sys.path[0] = filename
        import runpy

        runpy._run_module_as_main("__main__", False)
        return
    try:
        with open(filename, "rb") as f:
            source = f.read()
    except OSError as e:
        sys.stderr.flush()
        os.write(2, ("%s: can't open file %r: [Errno %d] %s\n" % (argv0, filename, e.errno, e.strerror)).encode(
            "utf-8", "backslashreplace"))
        raise SystemExit(2) from None
    sys.path[0] = _path0(filename)
    d = main.__dict__
    d["__file__"], d["__cached__"] = filename, None
    # The loaders CPython's start-up sets (set_main_loader), from the
    # import system it already has: importing importlib.machinery would
    # leave a module a cold start does not.
    external = sys.modules["_frozen_importlib_external"]
    magic = external.MAGIC_NUMBER
    try:
        if filename.endswith(".pyc") or source[:2] == magic[:2]:
            # Bytecode, as run_pyc_file: the magic, three words, the code.
            if source[:4] != magic:
                raise RuntimeError("Bad magic number in .pyc file")
            import marshal

            code = marshal.loads(source[16:])
            if type(code) is not type(_script.__code__):
                raise TypeError("Bad code object in .pyc file")
            d["__loader__"] = external.SourcelessFileLoader("__main__", filename)
        else:
            d["__loader__"] = external.SourceFileLoader("__main__", filename)
            code = compile(source, filename, "exec")
        exec(code, d)
    finally:
        d.pop("__file__", None)
        d.pop("__cached__", None)


def _reraise(exc):
    # The traceback as CPython prints it: from the program's first frame,
    # without this module's (sys.excepthook sees the trimmed one once).
    tb = exc.__traceback__
    here = _reraise.__code__.co_filename
    while tb is not None and tb.tb_frame.f_code.co_filename == here:
        tb = tb.tb_next
    hook = sys.excepthook

    def once(t, v, _tb):
        sys.excepthook = hook
        if v is not None:
            v.__traceback__ = tb
        sys.last_traceback = tb
        hook(t, v, tb)

    sys.excepthook = once
    raise exc


def _run():
    # The first compile() makes the AST types (which -c's own compile of
    # a cold start never needs): paid here, before the claim.
    compile("", "<string>", "exec")
    argv, env = _claim()
    args = [os.fsdecode(a) for a in argv]
    _environ(env)
    _stdio()
    sys.orig_argv = args
    # sitecustomize moves to the process's directory (PWD).
    _site()
    opt = args[1]
    if opt == "-c":
        sys.argv = ["-c"] + args[3:]
    elif opt == "-m":
        sys.argv = ["-m"] + args[3:]
        sys.path[0] = os.getcwd()
    else:
        sys.argv = args[1:]
    sys.modules.pop(__name__, None)
    main = sys.modules["__main__"]
    try:
        if opt == "-c":
            exec(compile(args[2], "<string>", "exec"), main.__dict__)
        elif opt == "-m":
            import runpy

            runpy._run_module_as_main(args[2], True)
        else:
            _script(args[0], opt, main)
    except SystemExit:
        raise
    except BaseException as e:
        _reraise(e)
