# secexec: a pure-Python _socket over the VM's kernel sockets. CPython for
# WASI has a _socket of its own, but WASI preview 1 cannot create, bind or
# connect sockets. Here a socket is a kernel socket in the process's
# descriptor table: reads, select/poll and close are ordinary WASI calls
# on its descriptor, and what WASI lacks (socket, bind, listen, accept,
# connect, names, options, send, recvfrom, getaddrinfo) is one request to
# the net device, /opt/secexec/net, which the kernel serves as this
# process with the VM's net policy and limits. socket.py (also in the
# support layer) installs this module as _socket before loading the
# standard socket module. Constants are Linux's, which is how the kernel
# numbers them.
import errno as _errno
import os as _os
import select as _select
import struct as _struct
import time as _time

import _socket as _wasi  # the build's own module: errors and inet_pton/ntop

error = OSError
timeout = TimeoutError
gaierror = _wasi.gaierror
herror = _wasi.herror
has_ipv6 = True

AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6 = 0, 1, 2, 10
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET = 1, 2, 3, 4, 5
SOCK_NONBLOCK, SOCK_CLOEXEC = 0o4000, 0o2000000
SOL_SOCKET, SOL_IP, SOL_TCP, SOL_UDP = 1, 0, 6, 17
IPPROTO_IP, IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_IPV6, IPPROTO_RAW = 0, 1, 6, 17, 41, 255
SO_DEBUG, SO_REUSEADDR, SO_TYPE, SO_ERROR, SO_DONTROUTE, SO_BROADCAST = 1, 2, 3, 4, 5, 6
SO_SNDBUF, SO_RCVBUF, SO_KEEPALIVE, SO_OOBINLINE, SO_LINGER, SO_REUSEPORT = 7, 8, 9, 10, 13, 15
SO_RCVLOWAT, SO_SNDLOWAT, SO_RCVTIMEO, SO_SNDTIMEO = 18, 19, 20, 21
SO_ACCEPTCONN, SO_PROTOCOL, SO_DOMAIN = 30, 38, 39
TCP_NODELAY, TCP_MAXSEG, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT = 1, 2, 4, 5, 6
IP_TOS, IP_TTL, IPV6_V6ONLY, IPV6_TCLASS = 1, 2, 26, 67
MSG_OOB, MSG_PEEK, MSG_DONTROUTE, MSG_TRUNC, MSG_DONTWAIT = 1, 2, 4, 0x20, 0x40
MSG_EOR, MSG_WAITALL, MSG_NOSIGNAL = 0x80, 0x100, 0x4000
SHUT_RD, SHUT_WR, SHUT_RDWR = 0, 1, 2
SOMAXCONN = 4096
AI_PASSIVE, AI_CANONNAME, AI_NUMERICHOST, AI_V4MAPPED = 1, 2, 4, 8
AI_ALL, AI_ADDRCONFIG, AI_NUMERICSERV = 0x10, 0x20, 0x400
NI_NUMERICHOST, NI_NUMERICSERV, NI_NOFQDN, NI_NAMEREQD, NI_DGRAM = 1, 2, 4, 8, 16
NI_MAXHOST, NI_MAXSERV = 1025, 32
EAI_BADFLAGS, EAI_NONAME, EAI_AGAIN, EAI_FAIL, EAI_NODATA = -1, -2, -3, -4, -5
EAI_FAMILY, EAI_SOCKTYPE, EAI_SERVICE, EAI_ADDRFAMILY = -6, -7, -8, -9
EAI_MEMORY, EAI_SYSTEM, EAI_OVERFLOW = -10, -11, -12
INADDR_ANY, INADDR_LOOPBACK, INADDR_BROADCAST, INADDR_NONE = 0, 0x7F000001, 0xFFFFFFFF, 0xFFFFFFFF

_DEVICE = "/opt/secexec/net"
(_OP_SOCKET, _OP_SOCKETPAIR, _OP_BIND, _OP_LISTEN, _OP_ACCEPT, _OP_CONNECT, _OP_SHUTDOWN,
 _OP_GETSOCKNAME, _OP_GETPEERNAME, _OP_SETSOCKOPT, _OP_GETSOCKOPT, _OP_SENDTO, _OP_RECVFROM,
 _OP_RESOLVE, _OP_HOSTNAME, _OP_SETBLOCKING, _OP_CLOSE, _OP_STARTTLS, _OP_DUP) = range(1, 20)
_TLS_FAILED = 0xFFFF


class _TLSFailure(Exception):
    """A failed TLS handshake: args[0] is the kernel's report (ssl.py
    turns it into ssl's errors)."""
_REQ = _struct.Struct("<BiqqqH")
_RESP = _struct.Struct("<HqqHI")
_MAX_SEND = 65507  # one request carries at most one datagram's worth
_ctl = -1


def _oserror(name, filename=None):
    n = getattr(_errno, name, _errno.EIO)
    if filename is not None:
        return OSError(n, _os.strerror(n), filename)
    return OSError(n, _os.strerror(n))


def _call(op, fd=-1, a=0, b=0, c=0, addr=b"", data=b""):
    """One request to the net device; returns (r1, r2, text, payload) or
    raises the OSError the kernel answered with."""
    global _ctl
    if _ctl < 0:
        _ctl = _os.open(_DEVICE, _os.O_RDWR)
    if isinstance(addr, str):
        addr = addr.encode("utf-8", "surrogateescape")
    msg = memoryview(_REQ.pack(op, fd, a, b, c, len(addr)) + addr + bytes(data))
    while msg:
        msg = msg[_os.write(_ctl, msg):]
    resp = _os.read(_ctl, 1 << 17)
    if len(resp) < _RESP.size:
        raise OSError(_errno.EIO, "secexec: short response from the net device")
    code, r1, r2, tlen, dlen = _RESP.unpack_from(resp)
    need = _RESP.size + tlen + dlen
    while len(resp) < need:
        more = _os.read(_ctl, need - len(resp))
        if not more:
            raise OSError(_errno.EIO, "secexec: short response from the net device")
        resp += more
    text = resp[_RESP.size:_RESP.size + tlen].decode("utf-8", "surrogateescape")
    if code == _TLS_FAILED:
        import json
        raise _TLSFailure(json.loads(resp[_RESP.size + tlen:need]))
    if code:
        raise _oserror(text)
    return r1, r2, text, resp[_RESP.size + tlen:need]


# The descriptors. The device installs a socket in the kernel's table;
# CPython's WASI layer (wasi-vfs) numbers descriptors itself and knows only
# those it opened, so the socket is opened once more through
# /proc/self/fd: that descriptor is the one Python reads, polls and
# closes, and the kernel's is the one device requests name. _kfds maps the
# first to the second for every socket alive.
_kfds = {}


def _adopt(kfd):
    try:
        fd = _os.open("/proc/self/fd/%d" % kfd, _os.O_RDWR)
    except OSError:
        try:
            _call(_OP_CLOSE, kfd)
        except OSError:
            pass
        raise
    _kfds[fd] = kfd
    return fd


def _release(fd):
    kfd = _kfds.pop(fd, -1)
    try:
        _os.close(fd)
    finally:
        if kfd >= 0:
            _call(_OP_CLOSE, kfd)


_defaulttimeout = None


def getdefaulttimeout():
    return _defaulttimeout


def _check_timeout(value):
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError("Timeout value must be int, float or None") from None
    if value != value or value < 0:
        raise ValueError("Timeout value out of range")
    return value


def setdefaulttimeout(value):
    global _defaulttimeout
    _defaulttimeout = _check_timeout(value)


# Addresses: Python's tuples to and from the device's text form.

def _pton4(s):
    parts = s.split(".") if isinstance(s, str) else ()
    if len(parts) != 4:
        return None
    out = bytearray()
    for p in parts:
        if not (p.isdigit() and p.isascii()) or len(p) > 3 or (len(p) > 1 and p[0] == "0") or int(p) > 255:
            return None
        out.append(int(p))
    return bytes(out)


def _pton6(s):
    # The build's C inet_pton has IPv6 turned off, so parse here.
    if not isinstance(s, str) or not s or len(s) > 45:
        return None
    tail = b""
    if "." in s:
        head, _, v4 = s.rpartition(":")
        tail = _pton4(v4)
        if tail is None:
            return None
        s = head + ":0:0"
    if s.count("::") > 1:
        return None
    if "::" in s:
        left, right = s.split("::")
        left = left.split(":") if left else []
        right = right.split(":") if right else []
        if len(left) + len(right) > 7:
            return None
        groups = left + ["0"] * (8 - len(left) - len(right)) + right
    else:
        groups = s.split(":")
        if len(groups) != 8:
            return None
    out = bytearray()
    for g in groups:
        if not 1 <= len(g) <= 4 or any(c not in "0123456789abcdefABCDEF" for c in g):
            return None
        out += int(g, 16).to_bytes(2, "big")
    if tail:
        out[12:] = tail
    return bytes(out)


def _ntop6(b):
    if b[:12] == b"\0" * 10 + b"\xff\xff":
        return "::ffff:%d.%d.%d.%d" % tuple(b[12:])
    groups = [int.from_bytes(b[i:i + 2], "big") for i in range(0, 16, 2)]
    best, start = (0, 0), None
    for i, g in enumerate(groups + [1]):
        if g == 0 and start is None:
            start = i
        elif g != 0 and start is not None:
            if i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    text = ["%x" % g for g in groups]
    if best[1] - best[0] >= 2:
        return ":".join(text[:best[0]]) + "::" + ":".join(text[best[1]:])
    return ":".join(text)


def _is_ipv4(s):
    return _pton4(s) is not None


def _is_ipv6(s):
    return _pton6(s) is not None


def _host_text(host):
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("idna")
    if not isinstance(host, str):
        raise TypeError("str, bytes or bytearray expected, not %s" % type(host).__name__)
    return host


def _addr_text(family, address, resolve):
    """The device's text for a Python address. Names are passed on for the
    kernel to resolve (so a rule naming a host applies to its addresses),
    unless resolve asks for an address here (bind)."""
    if family == AF_UNIX:
        if isinstance(address, str):
            address = address.encode("utf-8", "surrogateescape")
        if not isinstance(address, (bytes, bytearray, memoryview)):
            raise TypeError("a bytes-like object is required, not '%s'" % type(address).__name__)
        address = bytes(address)
        if address[:1] == b"\0":
            return "unix-abstract:" + address[1:].hex()
        return "unix-path-hex:" + address.hex()
    if family not in (AF_INET, AF_INET6):
        raise OSError(_errno.EAFNOSUPPORT, _os.strerror(_errno.EAFNOSUPPORT))
    if not isinstance(address, tuple) or len(address) < 2 or (family == AF_INET and len(address) != 2) or len(address) > 4:
        want = "AF_INET address must be a pair (host, port)" if family == AF_INET else \
            "AF_INET6 address must be a tuple (host, port[, flowinfo[, scopeid]])"
        raise TypeError(want)
    host, port = _host_text(address[0]), address[1]
    if not isinstance(port, int):
        raise TypeError("'%s' object cannot be interpreted as an integer" % type(port).__name__)
    if not 0 <= port <= 65535:
        raise OverflowError("%s(): port must be 0-65535." % ("getsockaddrarg",))
    if host == "":
        host = "0.0.0.0" if family == AF_INET else "::"
    elif host == "<broadcast>":
        host = "255.255.255.255"
    if _is_ipv4(host) or _is_ipv6(host):
        text = ("%s:%d" if ":" not in host else "[%s]:%d") % (host, port)
        name = None if resolve else _via.get(host)
        # An address getaddrinfo found for a name is connected to under
        # that name's rules (the kernel checks that the name resolves
        # to it), as when the kernel resolves the name itself.
        return "%s|%s" % (name, text) if name else text
    if resolve:
        for res in getaddrinfo(host, port, family):
            return _addr_text(family, res[4], False)
    return "%s:%d" % (host, port)


def _parse_addr(family, text):
    if text.startswith("unix:"):
        return text[5:]
    if text.startswith("unix-abstract:"):
        return b"\0" + bytes.fromhex(text[14:])
    if not text:
        return None
    host, _, port = text.rpartition(":")
    host, port = host.strip("[]"), int(port)
    if family == AF_INET6:
        if ":" not in host:
            host = "::ffff:" + host
        return (host, port, 0, 0)
    return (host, port)


class socket:
    """A kernel socket (see the module's comment)."""

    # No __weakref__: the standard socket class adds it, as it does to the
    # C type.
    __slots__ = ("_fd", "_family", "_type", "_proto", "_timeout", "_nonblock", "__dict__")

    def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
        if fileno is None:
            family = AF_INET if family == -1 else family
            type = SOCK_STREAM if type == -1 else type
            proto = 0 if proto == -1 else proto
            fd = _adopt(_call(_OP_SOCKET, -1, family, type, proto)[0])
        else:
            fd = fileno.fileno() if hasattr(fileno, "fileno") else fileno
            if not isinstance(fd, int):
                # (type is the parameter here.)
                raise TypeError("'%s' object cannot be interpreted as an integer" % fd.__class__.__name__)
            if fd < 0:
                raise ValueError("negative file descriptor")
            if fd not in _kfds:
                _os.fstat(fd)  # EBADF for a descriptor that is not open
                raise OSError(_errno.ENOTSOCK, _os.strerror(_errno.ENOTSOCK))
            kfd = _kfds[fd]
            if family == -1:
                family = _call(_OP_GETSOCKOPT, kfd, SOL_SOCKET, SO_DOMAIN)[0]
            if type == -1:
                type = _call(_OP_GETSOCKOPT, kfd, SOL_SOCKET, SO_TYPE)[0]
            if proto == -1:
                proto = _call(_OP_GETSOCKOPT, kfd, SOL_SOCKET, SO_PROTOCOL)[0]
        self._fd = fd
        self._family, self._type, self._proto = family, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), proto
        self._timeout = None
        self._nonblock = False
        if type & SOCK_NONBLOCK:
            self._timeout, self._nonblock = 0.0, True
        elif _defaulttimeout is not None:
            self.settimeout(_defaulttimeout)
        elif fileno is not None:
            self._set_nonblock(False)

    family = property(lambda self: self._family)
    type = property(lambda self: self._type)
    proto = property(lambda self: self._proto)
    timeout = property(lambda self: self._timeout)

    def fileno(self):
        return self._fd

    def _check(self):
        """The kernel's descriptor, for device requests."""
        kfd = _kfds.get(self._fd, -1)
        if kfd < 0:
            raise OSError(_errno.EBADF, "Bad file descriptor")
        return kfd

    def close(self):
        fd, self._fd = self._fd, -1
        if fd >= 0:
            try:
                _release(fd)
            except OSError as e:
                if e.errno != _errno.ECONNRESET:
                    raise

    def detach(self):
        fd, self._fd = self._fd, -1
        return fd

    def __del__(self):
        if getattr(self, "_fd", -1) >= 0:
            try:
                import warnings
                warnings.warn("unclosed %r" % (self,), ResourceWarning, source=self)
            except Exception:
                pass
            try:
                _release(self._fd)
            except OSError:
                pass
            self._fd = -1

    # Blocking, time-outs and waiting, as CPython does it: a socket with a
    # time-out is non-blocking underneath and waits with poll.

    def _set_nonblock(self, on):
        if on != self._nonblock:
            _call(_OP_SETBLOCKING, self._check(), 0 if on else 1)
            self._nonblock = on

    def settimeout(self, value):
        value = _check_timeout(value)
        self._set_nonblock(value is not None)
        self._timeout = value

    def gettimeout(self):
        return self._timeout

    def setblocking(self, flag):
        self.settimeout(None if flag else 0.0)

    def getblocking(self):
        return self._timeout != 0.0

    def _wait(self, events, deadline):
        remaining = deadline - _time.monotonic()
        if remaining > 0:
            p = _select.poll()
            p.register(self._fd, events)
            if p.poll(max(1, int(remaining * 1000 + 0.999))):
                return
        raise TimeoutError("timed out")

    def _io(self, events, fn, *args):
        if not self._timeout:
            return fn(*args)
        deadline = _time.monotonic() + self._timeout
        while True:
            try:
                return fn(*args)
            except BlockingIOError:
                pass
            self._wait(events, deadline)

    # The operations.

    def bind(self, address):
        _call(_OP_BIND, self._check(), addr=_addr_text(self._family, address, True))

    def listen(self, backlog=min(SOMAXCONN, 128)):
        _call(_OP_LISTEN, self._check(), backlog)

    def _accept1(self):
        r1, _, text, _ = _call(_OP_ACCEPT, self._check())
        return _adopt(r1), _parse_addr(self._family, text)

    def _accept(self):
        return self._io(_select.POLLIN, self._accept1)

    def connect(self, address):
        err = self._connect(address)
        if err:
            raise err

    def connect_ex(self, address):
        err = self._connect(address)
        return err.errno if err else 0

    def _connect(self, address):
        text = _addr_text(self._family, address, False)
        try:
            _call(_OP_CONNECT, self._check(), addr=text)
            return None
        except OSError as e:
            if e.errno != _errno.EINPROGRESS or not self._timeout:
                return e
        deadline = _time.monotonic() + self._timeout
        self._wait(_select.POLLOUT, deadline)
        r1, _, text, _ = _call(_OP_GETSOCKOPT, self._check(), SOL_SOCKET, SO_ERROR)
        return _oserror(text) if r1 else None

    def getsockname(self):
        return _parse_addr(self._family, _call(_OP_GETSOCKNAME, self._check())[2])

    def getpeername(self):
        return _parse_addr(self._family, _call(_OP_GETPEERNAME, self._check())[2])

    def shutdown(self, how):
        _call(_OP_SHUTDOWN, self._check(), how)

    def setsockopt(self, level, optname, value, optlen=None):
        if value is None:
            value = 0
        elif not isinstance(value, int):
            b = bytes(value)
            if level == SOL_SOCKET and optname == SO_LINGER and len(b) >= 8:
                onoff, secs = _struct.unpack_from("ii", b)
                value = secs if onoff else -1
            elif level == SOL_SOCKET and optname in (SO_RCVTIMEO, SO_SNDTIMEO) and len(b) >= 16:
                sec, usec = _struct.unpack_from("qq", b)
                value = sec * 1000000000 + usec * 1000
            elif len(b) in (1, 2, 4, 8):
                value = int.from_bytes(b, "little", signed=True)
            else:
                raise OSError(_errno.EINVAL, _os.strerror(_errno.EINVAL))
        _call(_OP_SETSOCKOPT, self._check(), level, optname, value)

    def getsockopt(self, level, optname, buflen=None):
        r1, _, text, _ = _call(_OP_GETSOCKOPT, self._check(), level, optname)
        if level == SOL_SOCKET and optname == SO_ERROR and r1:
            r1 = getattr(_errno, text, _errno.EIO)
        if not buflen:
            return r1
        if level == SOL_SOCKET and optname == SO_LINGER:
            b = _struct.pack("ii", 0 if r1 < 0 else 1, max(r1, 0))
        elif level == SOL_SOCKET and optname in (SO_RCVTIMEO, SO_SNDTIMEO):
            b = _struct.pack("qq", r1 // 1000000000, r1 % 1000000000 // 1000)
        else:
            b = _struct.pack("i", r1)
        return b[:buflen]

    def _recv1(self, bufsize, flags):
        if flags == 0:
            return _os.read(self._fd, bufsize)
        return _call(_OP_RECVFROM, self._check(), flags, bufsize)[3]

    def recv(self, bufsize, flags=0):
        if bufsize < 0:
            raise ValueError("negative buffersize in recv")
        self._check()
        return self._io(_select.POLLIN, self._recv1, bufsize, flags)

    def recv_into(self, buffer, nbytes=0, flags=0):
        view = memoryview(buffer).cast("B")
        if nbytes < 0:
            raise ValueError("negative buffersize in recv_into")
        if nbytes > len(view):
            raise ValueError("buffer too small for requested bytes")
        data = self.recv(nbytes or len(view), flags)
        view[:len(data)] = data
        return len(data)

    def _recvfrom1(self, bufsize, flags):
        _, _, text, data = _call(_OP_RECVFROM, self._check(), flags, bufsize)
        return data, _parse_addr(self._family, text)

    def recvfrom(self, bufsize, flags=0):
        if bufsize < 0:
            raise ValueError("negative buffersize in recvfrom")
        self._check()
        return self._io(_select.POLLIN, self._recvfrom1, bufsize, flags)

    def recvfrom_into(self, buffer, nbytes=0, flags=0):
        view = memoryview(buffer).cast("B")
        if nbytes > len(view):
            raise ValueError("nbytes is greater than the length of the buffer")
        data, addr = self.recvfrom(nbytes or len(view), flags)
        view[:len(data)] = data
        return len(data), addr

    def _send1(self, data, flags, addr):
        if self._type == SOCK_DGRAM and len(data) > _MAX_SEND:
            raise OSError(_errno.EMSGSIZE, _os.strerror(_errno.EMSGSIZE))
        return _call(_OP_SENDTO, self._check(), flags, addr=addr, data=data[:_MAX_SEND])[0]

    def send(self, data, flags=0):
        self._check()
        return self._io(_select.POLLOUT, self._send1, memoryview(data).cast("B"), flags, b"")

    def sendall(self, data, flags=0):
        self._check()
        view = memoryview(data).cast("B")
        deadline = None if not self._timeout else _time.monotonic() + self._timeout
        while view:
            try:
                n = self._send1(view, flags, b"")
            except BlockingIOError:
                if deadline is None:
                    raise
                self._wait(_select.POLLOUT, deadline)
                continue
            view = view[n:]

    def sendto(self, data, flags_or_addr, addr=None):
        if addr is None:
            flags, addr = 0, flags_or_addr
        else:
            flags = flags_or_addr
        self._check()
        text = _addr_text(self._family, addr, False)
        return self._io(_select.POLLOUT, self._send1, memoryview(data).cast("B"), flags, text)

    def __repr__(self):
        return "<socket object, fd=%d, family=%d, type=%d, proto=%d>" % (
            self._fd, self._family, self._type, self._proto)


SocketType = socket


def socketpair(family=AF_UNIX, type=SOCK_STREAM, proto=0):
    a, b, _, _ = _call(_OP_SOCKETPAIR, -1, family, type, proto)
    try:
        a = _adopt(a)
    except OSError:
        _call(_OP_CLOSE, b)
        raise
    b = _adopt(b)
    return socket(family, type, proto, a), socket(family, type, proto, b)


def dup(fd):
    kfd = _kfds.get(fd, -1)
    if kfd < 0:
        raise OSError(_errno.ENOTSOCK, _os.strerror(_errno.ENOTSOCK))
    return _adopt(_call(_OP_DUP, kfd)[0])


def close(fd):
    _release(fd)


# Names and services.

_SERVICES = {"echo": 7, "discard": 9, "daytime": 13, "ftp-data": 20, "ftp": 21, "ssh": 22,
             "telnet": 23, "smtp": 25, "time": 37, "domain": 53, "gopher": 70, "finger": 79,
             "http": 80, "pop3": 110, "sunrpc": 111, "nntp": 119, "ntp": 123, "imap2": 143,
             "snmp": 161, "ldap": 389, "https": 443, "submissions": 465, "syslog": 514,
             "submission": 587, "ldaps": 636, "imaps": 993, "pop3s": 995, "mysql": 3306,
             "postgresql": 5432, "http-alt": 8080}
_UDP_SERVICES = {"echo", "discard", "daytime", "time", "domain", "sunrpc", "ntp", "snmp", "syslog"}
_PROTOCOLS = {"ip": 0, "icmp": 1, "tcp": 6, "udp": 17, "ipv6": 41, "raw": 255}


def getservbyname(name, proto=None):
    if name in _SERVICES:
        return _SERVICES[name]
    raise OSError("service/proto not found")


def getservbyport(port, proto=None):
    if not 0 <= port <= 65535:
        raise OverflowError("getservbyport: port must be 0-65535.")
    for name, p in _SERVICES.items():
        if p == port:
            return name
    raise OSError("port/proto not found")


def getprotobyname(name):
    if name in _PROTOCOLS:
        return _PROTOCOLS[name]
    raise OSError("protocol not found")


def gethostname():
    return _call(_OP_HOSTNAME)[3].decode("utf-8", "surrogateescape")


def sethostname(name):
    raise OSError(_errno.EPERM, _os.strerror(_errno.EPERM))


# The names getaddrinfo resolved, by address (bounded: it is a hint).
_via = {}


def _hosts():
    """The VM's /etc/hosts as (address, names) pairs: the guest's own
    file, read as glibc reads it before asking DNS (the kernel's resolver
    never reads the host's)."""
    out = []
    try:
        with open("/etc/hosts", "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return out
    for line in data.decode("utf-8", "replace").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and (_is_ipv4(fields[0]) or _is_ipv6(fields[0])):
            out.append((fields[0], fields[1:]))
    return out


def _resolve(host):
    """The addresses of host: /etc/hosts, then the kernel's resolver
    (under the VM's dns rules), as gaierror on failure."""
    if _is_ipv4(host) or _is_ipv6(host):
        return [host]
    low = host.lower().rstrip(".")
    listed = [a for a, names in _hosts() if low in (n.lower() for n in names)]
    if listed:
        return listed
    try:
        data = _call(_OP_RESOLVE, addr=host)[3]
    except OSError as e:
        if e.errno == _errno.EACCES:
            raise gaierror(EAI_FAIL, "Non-recoverable failure in name resolution "
                                     "(denied by the VM's net policy)") from None
        if e.errno in (_errno.EAGAIN, _errno.ETIMEDOUT):
            raise gaierror(EAI_AGAIN, "Temporary failure in name resolution") from None
        raise gaierror(EAI_NONAME, "Name or service not known") from None
    addrs = data.decode("ascii").split()
    low = host.lower().rstrip(".")
    if low != "localhost" and not low.endswith(".localhost"):  # the VM's own loopback
        if len(_via) > 4096:
            _via.clear()
        for a in addrs:
            _via[a] = host
    return addrs


_KINDS = ((SOCK_STREAM, IPPROTO_TCP), (SOCK_DGRAM, IPPROTO_UDP), (SOCK_RAW, 0))


def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    if host is not None:
        host = _host_text(host)
    named = 0
    if isinstance(port, (bytes, bytearray)):
        port = bytes(port).decode("ascii")
    if port is None:
        port = 0
    elif isinstance(port, str):
        if port.isdigit():
            port = int(port)
        elif flags & AI_NUMERICSERV or port not in _SERVICES:
            raise gaierror(EAI_SERVICE, "Servname not supported for ai_socktype")
        else:
            # /etc/services lists most for tcp only, a few for tcp and udp.
            named = -1 if port in _UDP_SERVICES else SOCK_STREAM
            port = _SERVICES[port]
    elif not isinstance(port, int):
        raise OSError("Int or String expected")
    if family not in (AF_UNSPEC, AF_INET, AF_INET6):
        raise gaierror(EAI_FAMILY, "ai_family not supported")
    if host is None or host == "":
        if host == "" and not flags & AI_PASSIVE:
            raise gaierror(EAI_NONAME, "Name or service not known")
        addrs = ["0.0.0.0", "::"] if flags & AI_PASSIVE else ["::1", "127.0.0.1"]
    elif flags & AI_NUMERICHOST and not (_is_ipv4(host) or _is_ipv6(host)):
        raise gaierror(EAI_NONAME, "Name or service not known")
    else:
        addrs = _resolve(host)
    out = []
    for a in addrs:
        fam = AF_INET6 if ":" in a else AF_INET
        if family and fam != family:
            continue
        sa = (a, port) if fam == AF_INET else (a, port, 0, 0)
        for kind, kproto in _KINDS:
            if (type and kind != type) or (proto and kproto and proto != kproto) or (named > 0 and kind != named) or \
                    (named < 0 and kind == SOCK_RAW):
                continue
            out.append((fam, kind, proto or kproto, "", sa))
    if not out:
        if family:
            raise gaierror(EAI_ADDRFAMILY, "Address family for hostname not supported")
        raise gaierror(EAI_NONAME, "Name or service not known")
    return out


def gethostbyname(name):
    for a in _resolve(_host_text(name)):
        if ":" not in a:
            return a
    raise gaierror(EAI_ADDRFAMILY, "Address family for hostname not supported")


def gethostbyname_ex(name):
    name = _host_text(name)
    v4 = [a for a in _resolve(name) if ":" not in a]
    if not v4:
        raise gaierror(EAI_ADDRFAMILY, "Address family for hostname not supported")
    return name, [], v4


def _is_loopback(a):
    return a.startswith("127.") or a == "::1"


def gethostbyaddr(ip):
    ip = _host_text(ip)
    addr = _resolve(ip)[0]
    for a, names in _hosts():
        if a == addr:
            return names[0], names[1:], [addr]
    if _is_loopback(addr):
        return "localhost", [], [addr]
    raise herror(1, "Unknown host")


def getnameinfo(sockaddr, flags):
    if not isinstance(sockaddr, tuple) or len(sockaddr) < 2:
        raise TypeError("getnameinfo() argument 1 must be a tuple")
    host, port = _host_text(sockaddr[0]), sockaddr[1]
    if not (_is_ipv4(host) or _is_ipv6(host)):
        raise gaierror(EAI_NONAME, "Name or service not known")
    if not flags & NI_NUMERICHOST:
        try:
            host = gethostbyaddr(host)[0]
        except OSError:
            if flags & NI_NAMEREQD:
                raise gaierror(EAI_NONAME, "Name or service not known") from None
    serv = str(port)
    if not flags & NI_NUMERICSERV:
        try:
            serv = getservbyport(port)
        except OSError:
            pass
    return host, serv


# Byte order and address conversions.

def htons(x):
    return _wasi.htons(x)


def ntohs(x):
    return _wasi.ntohs(x)


def htonl(x):
    return _wasi.htonl(x)


def ntohl(x):
    return _wasi.ntohl(x)


def inet_aton(s):
    return _wasi.inet_aton(s)


def inet_ntoa(b):
    b = bytes(b)
    if len(b) != 4:
        raise OSError("packed IP wrong length for inet_ntoa")
    return "%d.%d.%d.%d" % tuple(b)


def inet_pton(af, s):
    if af not in (AF_INET, AF_INET6):
        raise OSError(_errno.EAFNOSUPPORT, _os.strerror(_errno.EAFNOSUPPORT))
    if not isinstance(s, str):
        raise TypeError("inet_pton() argument 2 must be str, not %s" % type(s).__name__)
    b = _pton4(s) if af == AF_INET else _pton6(s)
    if b is None:
        raise OSError("illegal IP address string passed to inet_pton")
    return b


def inet_ntop(af, b):
    b = bytes(b)
    if af == AF_INET:
        if len(b) != 4:
            raise ValueError("invalid length of packed IP address string")
        return "%d.%d.%d.%d" % tuple(b)
    if af == AF_INET6:
        if len(b) != 16:
            raise ValueError("invalid length of packed IP address string")
        return _ntop6(b)
    raise ValueError("unknown address family %d" % af)
