# secexec: the standard library's socket module over the VM's kernel
# sockets. This file shadows the standard module (it comes first on
# sys.path): it installs _secexec_socket as _socket, since CPython for WASI
# has no way to create sockets of its own, then loads the real socket
# module into itself, so everything built on it (http.client, urllib,
# socketserver, asyncio, selectors) works unchanged.
import sys as _sys
import zipimport as _zipimport

import _secexec_socket

_sys.modules["_socket"] = _secexec_socket


def _secexec_stdlib_code():
    for entry in _sys.path:
        if entry.endswith(".zip"):
            try:
                return _zipimport.zipimporter(entry).get_code("socket")
            except (_zipimport.ZipImportError, OSError):
                continue
    raise ImportError("secexec: the standard socket module is missing")


exec(_secexec_stdlib_code(), globals())
