# secexec: the standard library's own code of a module that a support file
# shadows (socket, subprocess). It comes from the standard library's
# bytecode directory (/opt/secexec/python-stdlib, which set-up extracts
# from the zip) when that is on sys.path, else from the zip itself, whose
# directory zipimport then has to read.
import marshal as _marshal
import sys as _sys
import zipimport as _zipimport

STDLIB_DIR = "/opt/secexec/python-stdlib"


def code(name):
    """Returns the code object of the standard module name."""
    if STDLIB_DIR in _sys.path:
        try:
            with open(STDLIB_DIR + "/" + name + ".pyc", "rb") as f:
                data = f.read()
        except OSError:
            pass
        else:
            # The pyc header: magic, flags, and two words of validation.
            return _marshal.loads(memoryview(data)[16:])
    for entry in _sys.path:
        if entry.endswith(".zip"):
            try:
                return _zipimport.zipimporter(entry).get_code(name)
            except (_zipimport.ZipImportError, OSError):
                continue
    raise ImportError("secexec: the standard " + name + " module is missing")
