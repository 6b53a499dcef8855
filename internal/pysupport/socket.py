# secexec: the standard library's socket module over the VM's kernel
# sockets. This file shadows the standard module (it comes first on
# sys.path): it installs _secexec_socket as _socket, since CPython for WASI
# has no way to create sockets of its own, then loads the real socket
# module into itself, so everything built on it (http.client, urllib,
# socketserver, asyncio, selectors) works unchanged.
import sys as _sys
import _secexec_stdlib

import _secexec_socket

_sys.modules["_socket"] = _secexec_socket


exec(_secexec_stdlib.code("socket"), globals())
