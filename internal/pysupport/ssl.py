# secexec: the ssl module for CPython on WASI in a VM. The build has no
# _ssl (no OpenSSL), so the standard module cannot load; this one runs
# TLS through the kernel, as node's tls does: wrap_socket asks the net
# device to run the handshake on the host side (Go's crypto/tls), which
# verifies the peer against the host's trust store or the CAs loaded into
# the context, and the socket carries plaintext afterwards. What works:
# SSLContext (client and server), create_default_context, wrap_socket,
# SSLSocket (getpeercert, version, cipher, selected_alpn_protocol), and so
# https in http.client and urllib.request (and asyncio's TLS, which
# sitecustomize.py routes through wrap_socket). What does not: SSLObject
# and MemoryBIO, renegotiation, unwrap, session reuse, client
# certificates checked by the guest.
import base64 as _base64
import enum as _enum
import json as _json
import os as _os
import socket as _socket
from collections import namedtuple as _namedtuple

import _secexec_socket as _s

OPENSSL_VERSION = "secexec host TLS (Go crypto/tls)"
OPENSSL_VERSION_INFO = (3, 0, 0, 0, 0)
OPENSSL_VERSION_NUMBER = 0x30000000
HAS_SNI = HAS_ALPN = HAS_ECDH = HAS_TLSv1_2 = HAS_TLSv1_3 = HAS_NEVER_CHECK_COMMON_NAME = True
HAS_NPN = HAS_SSLv2 = HAS_SSLv3 = HAS_TLSv1 = HAS_TLSv1_1 = HAS_PSK = False
CHANNEL_BINDING_TYPES = []
_DEFAULT_CIPHERS = "DEFAULT"


class SSLError(OSError):
    library = None
    reason = None

    def __str__(self):
        return self.args[1] if len(self.args) > 1 else super().__str__()


class SSLZeroReturnError(SSLError):
    pass


class SSLWantReadError(SSLError):
    pass


class SSLWantWriteError(SSLError):
    pass


class SSLSyscallError(SSLError):
    pass


class SSLEOFError(SSLError):
    pass


class SSLCertVerificationError(SSLError, ValueError):
    verify_code = 0
    verify_message = ""


CertificateError = SSLCertVerificationError
SSL_ERROR_SSL, SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE, SSL_ERROR_SYSCALL = 1, 2, 3, 5
SSL_ERROR_ZERO_RETURN, SSL_ERROR_EOF = 6, 8


class VerifyMode(_enum.IntEnum):
    CERT_NONE = 0
    CERT_OPTIONAL = 1
    CERT_REQUIRED = 2


CERT_NONE, CERT_OPTIONAL, CERT_REQUIRED = VerifyMode.CERT_NONE, VerifyMode.CERT_OPTIONAL, VerifyMode.CERT_REQUIRED


class VerifyFlags(_enum.IntFlag):
    VERIFY_DEFAULT = 0
    VERIFY_CRL_CHECK_LEAF = 0x4
    VERIFY_CRL_CHECK_CHAIN = 0xC
    VERIFY_X509_STRICT = 0x20
    VERIFY_X509_TRUSTED_FIRST = 0x8000
    VERIFY_ALLOW_PROXY_CERTS = 0x40
    VERIFY_X509_PARTIAL_CHAIN = 0x80000


globals().update(VerifyFlags.__members__)


class _SSLMethod(_enum.IntEnum):
    PROTOCOL_TLS = 2
    PROTOCOL_TLS_CLIENT = 16
    PROTOCOL_TLS_SERVER = 17


PROTOCOL_TLS = PROTOCOL_SSLv23 = _SSLMethod.PROTOCOL_TLS
PROTOCOL_TLS_CLIENT, PROTOCOL_TLS_SERVER = _SSLMethod.PROTOCOL_TLS_CLIENT, _SSLMethod.PROTOCOL_TLS_SERVER


class TLSVersion(_enum.IntEnum):
    MINIMUM_SUPPORTED = -2
    SSLv3 = 0x0300
    TLSv1 = 0x0301
    TLSv1_1 = 0x0302
    TLSv1_2 = 0x0303
    TLSv1_3 = 0x0304
    MAXIMUM_SUPPORTED = -1


class Options(_enum.IntFlag):
    OP_ALL = 0x80000050
    OP_NO_SSLv2 = 0
    OP_NO_SSLv3 = 0x02000000
    OP_NO_TLSv1 = 0x04000000
    OP_NO_TLSv1_1 = 0x10000000
    OP_NO_TLSv1_2 = 0x08000000
    OP_NO_TLSv1_3 = 0x20000000
    OP_NO_COMPRESSION = 0x20000
    OP_CIPHER_SERVER_PREFERENCE = 0x400000
    OP_SINGLE_DH_USE = 0
    OP_SINGLE_ECDH_USE = 0
    OP_NO_TICKET = 0x4000
    OP_NO_RENEGOTIATION = 0x40000000
    OP_ENABLE_MIDDLEBOX_COMPAT = 0x100000


globals().update(Options.__members__)


class _ASN1Object(_namedtuple("_ASN1Object", "nid shortname longname oid")):
    pass


class Purpose(_ASN1Object, _enum.Enum):
    SERVER_AUTH = (129, "serverAuth", "TLS Web Server Authentication", "1.3.6.1.5.5.7.3.1")
    CLIENT_AUTH = (130, "clientAuth", "TLS Web Client Authentication", "1.3.6.1.5.5.7.3.2")


DefaultVerifyPaths = _namedtuple("DefaultVerifyPaths",
                                 "cafile capath openssl_cafile_env openssl_cafile openssl_capath_env openssl_capath")


def get_default_verify_paths():
    return DefaultVerifyPaths(None, None, "SSL_CERT_FILE", "", "SSL_CERT_DIR", "")


def RAND_bytes(n):
    return _os.urandom(n)


def RAND_status():
    return True


def RAND_add(string, entropy):
    pass


PEM_HEADER = "-----BEGIN CERTIFICATE-----"
PEM_FOOTER = "-----END CERTIFICATE-----"


def DER_cert_to_PEM_cert(der_cert_bytes):
    f = _base64.standard_b64encode(der_cert_bytes).decode("ascii")
    ss = [PEM_HEADER] + [f[i:i + 64] for i in range(0, len(f), 64)]
    return "\n".join(ss) + "\n" + PEM_FOOTER + "\n"


def PEM_cert_to_DER_cert(pem_cert_string):
    if not pem_cert_string.startswith(PEM_HEADER):
        raise ValueError("Invalid PEM encoding; must start with %s" % PEM_HEADER)
    if not pem_cert_string.strip().endswith(PEM_FOOTER):
        raise ValueError("Invalid PEM encoding; must end with %s" % PEM_FOOTER)
    d = pem_cert_string.strip()[len(PEM_HEADER):-len(PEM_FOOTER)]
    return _base64.decodebytes(d.encode("ASCII", "strict"))


def cert_time_to_seconds(cert_time):
    import time
    import calendar
    return calendar.timegm(time.strptime(cert_time, "%b %d %H:%M:%S %Y GMT"))


def _pem_blocks(data):
    """The PEM certificates in data (text or DER bytes)."""
    if isinstance(data, (bytes, bytearray)) and not bytes(data).lstrip().startswith(b"-----"):
        return [DER_cert_to_PEM_cert(bytes(data))]
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode("ascii")
    out, cur = [], None
    for line in data.splitlines():
        if line.startswith("-----BEGIN CERTIFICATE"):
            cur = [line]
        elif cur is not None:
            cur.append(line)
            if line.startswith("-----END CERTIFICATE"):
                out.append("\n".join(cur) + "\n")
                cur = None
    return out


class SSLContext:
    """TLS settings for sockets this module wraps (see the module's
    comment for what the kernel does with them)."""

    sslsocket_class = None
    sslobject_class = None

    def __init__(self, protocol=None, *args, **kwargs):
        if protocol is None:
            protocol = PROTOCOL_TLS
        self.protocol = _SSLMethod(protocol)
        client = self.protocol == PROTOCOL_TLS_CLIENT
        self.verify_mode = CERT_REQUIRED if client else CERT_NONE
        self.check_hostname = client
        self.options = Options.OP_ALL | Options.OP_NO_SSLv3 | Options.OP_NO_COMPRESSION
        self.verify_flags = VerifyFlags.VERIFY_X509_TRUSTED_FIRST
        self.minimum_version = TLSVersion.MINIMUM_SUPPORTED
        self.maximum_version = TLSVersion.MAXIMUM_SUPPORTED
        self.hostname_checks_common_name = False
        self.post_handshake_auth = None
        self.sni_callback = None
        self.keylog_filename = None
        self.security_level = 2
        self._ca, self._cert, self._key, self._alpn = [], "", "", []

    def __setattr__(self, name, value):
        if name == "check_hostname" and value and getattr(self, "verify_mode", CERT_REQUIRED) == CERT_NONE:
            object.__setattr__(self, "verify_mode", CERT_REQUIRED)
        if name == "verify_mode":
            value = VerifyMode(value)
            if value == CERT_NONE and getattr(self, "check_hostname", False):
                raise ValueError("Cannot set verify_mode to CERT_NONE when check_hostname is enabled.")
        object.__setattr__(self, name, value)

    def load_verify_locations(self, cafile=None, capath=None, cadata=None):
        if cafile is None and capath is None and cadata is None:
            raise TypeError("cafile, capath and cadata cannot be all omitted")
        if cafile is not None:
            with open(cafile, "rb") as f:
                blocks = _pem_blocks(f.read())
            if not blocks:
                raise SSLError(0, "[X509: NO_CERTIFICATE_OR_CRL_FOUND] no certificate or crl found")
            self._ca += blocks
        if capath is not None:
            for name in sorted(_os.listdir(capath)):
                try:
                    with open(_os.path.join(capath, name), "rb") as f:
                        self._ca += _pem_blocks(f.read())
                except OSError:
                    pass
        if cadata is not None:
            blocks = _pem_blocks(cadata)
            if not blocks:
                raise SSLError(0, "[X509: NO_CERTIFICATE_OR_CRL_FOUND] no certificate or crl found")
            self._ca += blocks

    def load_default_certs(self, purpose=Purpose.SERVER_AUTH):
        # The host's trust store is used whenever no CA was loaded.
        pass

    def set_default_verify_paths(self):
        pass

    def load_cert_chain(self, certfile, keyfile=None, password=None):
        with open(certfile) as f:
            cert = f.read()
        key = cert
        if keyfile is not None:
            with open(keyfile) as f:
                key = f.read()
        self._cert, self._key = cert, key

    def set_alpn_protocols(self, alpn_protocols):
        self._alpn = [str(p) for p in alpn_protocols]

    def set_npn_protocols(self, npn_protocols):
        pass

    def set_ciphers(self, ciphers):
        pass

    def set_ecdh_curve(self, name):
        pass

    def set_servername_callback(self, cb):
        self.sni_callback = cb

    def get_ca_certs(self, binary_form=False):
        return []

    def cert_store_stats(self):
        return {"x509_ca": len(self._ca), "crl": 0, "x509": len(self._ca)}

    def session_stats(self):
        return {}

    def wrap_socket(self, sock, server_side=False, do_handshake_on_connect=True,
                    suppress_ragged_eofs=True, server_hostname=None, session=None):
        return SSLSocket._create(sock, self, server_side, do_handshake_on_connect,
                                 suppress_ragged_eofs, server_hostname)

    def wrap_bio(self, *args, **kwargs):
        raise NotImplementedError("secexec: TLS over memory BIOs (SSLObject) is not available; "
                                  "TLS runs in the kernel on sockets")


def create_default_context(purpose=Purpose.SERVER_AUTH, *, cafile=None, capath=None, cadata=None):
    if purpose == Purpose.SERVER_AUTH:
        ctx = SSLContext(PROTOCOL_TLS_CLIENT)
    else:
        ctx = SSLContext(PROTOCOL_TLS_SERVER)
    if cafile or capath or cadata:
        ctx.load_verify_locations(cafile, capath, cadata)
    return ctx


def _create_unverified_context(protocol=None, *, cert_reqs=CERT_NONE, check_hostname=False,
                               purpose=Purpose.SERVER_AUTH, certfile=None, keyfile=None,
                               cafile=None, capath=None, cadata=None):
    ctx = SSLContext(protocol or (PROTOCOL_TLS_CLIENT if purpose == Purpose.SERVER_AUTH else PROTOCOL_TLS_SERVER))
    ctx.check_hostname = check_hostname
    ctx.verify_mode = cert_reqs
    if certfile or keyfile:
        ctx.load_cert_chain(certfile, keyfile)
    if cafile or capath or cadata:
        ctx.load_verify_locations(cafile, capath, cadata)
    return ctx


_create_default_https_context = create_default_context
_create_stdlib_context = _create_unverified_context

# OpenSSL's codes and texts for the failures the kernel reports (by node's
# code names).
_VERIFY_ERRORS = {
    "CERT_NOT_YET_VALID": (9, "certificate is not yet valid"),
    "CERT_HAS_EXPIRED": (10, "certificate has expired"),
    "DEPTH_ZERO_SELF_SIGNED_CERT": (18, "self-signed certificate"),
    "SELF_SIGNED_CERT_IN_CHAIN": (19, "self-signed certificate in certificate chain"),
    "UNABLE_TO_GET_ISSUER_CERT": (2, "unable to get issuer certificate"),
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE": (20, "unable to get local issuer certificate"),
    "CERT_UNTRUSTED": (27, "certificate not trusted"),
}


def _handshake_error(failure, server_hostname):
    code, message = failure.get("code", ""), failure.get("message", "")
    if code == "ECONNRESET":
        return ConnectionResetError(_s._errno.ECONNRESET, "Connection reset by peer")
    if code == "ERR_TLS_CERT_ALTNAME_INVALID":
        vc, vm = 62, "Hostname mismatch, certificate is not valid for '%s'." % server_hostname
    elif code in _VERIFY_ERRORS:
        vc, vm = _VERIFY_ERRORS[code]
    else:
        e = SSLError(1, "[SSL] %s" % message)
        e.reason = code
        return e
    e = SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: %s" % vm)
    e.reason, e.library = "CERTIFICATE_VERIFY_FAILED", "SSL"
    e.verify_code, e.verify_message = vc, vm
    return e


class SSLSocket(_socket.socket):
    """A socket whose handshake the kernel ran: its reads and writes are
    plaintext, the kernel encrypts."""

    def __init__(self, *args, **kwargs):
        raise TypeError("%s does not have a public constructor. Instances are returned by "
                        "SSLContext.wrap_socket()." % self.__class__.__name__)

    @classmethod
    def _create(cls, sock, context, server_side, do_handshake_on_connect, suppress_ragged_eofs, server_hostname):
        if sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_TYPE) != _socket.SOCK_STREAM:
            raise NotImplementedError("only stream sockets are supported")
        if server_side and server_hostname:
            raise ValueError("server_hostname can only be specified in client mode")
        if context.check_hostname and not server_hostname and not server_side:
            raise ValueError("check_hostname requires server_hostname")
        timeout = sock.gettimeout()
        self = cls.__new__(cls)
        _socket.socket.__init__(self, sock.family, sock.type, sock.proto, sock.detach())
        self.settimeout(timeout)
        self._context = context
        self._session = None
        self.server_side = server_side
        self.server_hostname = server_hostname
        self.do_handshake_on_connect = do_handshake_on_connect
        self.suppress_ragged_eofs = suppress_ragged_eofs
        self._info = None
        try:
            self.getpeername()
            connected = True
        except OSError:
            connected = False
        if connected and do_handshake_on_connect:
            try:
                self.do_handshake()
            except BaseException:
                self.close()
                raise
        return self

    @property
    def context(self):
        return self._context

    @property
    def session(self):
        return None

    @property
    def session_reused(self):
        return False

    def do_handshake(self, block=False):
        ctx = self._context
        flags = (1 if self.server_side else 0) | (2 if ctx.verify_mode == CERT_NONE else 0)
        # The kernel sends the name (SNI) and checks the certificate
        # against it; without check_hostname only the chain is verified.
        name = self.server_hostname or "" if ctx.check_hostname and not self.server_side else ""
        req = {"ca": ctx._ca, "cert": ctx._cert, "key": ctx._key, "alpn": ctx._alpn}
        timeout = self.gettimeout()
        # The handshake is one kernel call on a blocking socket; a time-out
        # does not cut it short (the VM's connect time-out bounds it).
        _socket.socket.settimeout(self, None)
        try:
            try:
                _, _, _, data = _s._call(_s._OP_STARTTLS, self._check(), flags,
                                         addr=name, data=_json.dumps(req).encode())
            except _s._TLSFailure as f:
                raise _handshake_error(f.args[0], self.server_hostname) from None
        finally:
            _socket.socket.settimeout(self, timeout)
        self._info = _json.loads(data)

    def connect(self, addr):
        super().connect(addr)
        if self.do_handshake_on_connect:
            self.do_handshake()

    def connect_ex(self, addr):
        try:
            self.connect(addr)
            return 0
        except OSError as e:
            return e.errno

    def accept(self):
        newsock, addr = super().accept()
        newsock = self._context.wrap_socket(newsock, do_handshake_on_connect=self.do_handshake_on_connect,
                                            suppress_ragged_eofs=self.suppress_ragged_eofs, server_side=True)
        return newsock, addr

    def getpeercert(self, binary_form=False):
        if self._info is None:
            raise ValueError("handshake not done yet")
        certs = self._info.get("peer_certs") or []
        if binary_form:
            return _base64.b64decode(certs[0]) if certs else None
        if self._context.verify_mode == CERT_NONE or not self._info.get("peer"):
            return {}
        p = self._info["peer"]

        def names(rdns):
            return tuple(tuple(tuple(a) for a in rdn) for rdn in rdns)
        out = {"subject": names(p["subject"]), "issuer": names(p["issuer"]), "version": p["version"],
               "serialNumber": p["serialNumber"], "notBefore": p["notBefore"], "notAfter": p["notAfter"]}
        if p.get("subjectAltName"):
            out["subjectAltName"] = tuple(tuple(a) for a in p["subjectAltName"])
        return out

    def get_verified_chain(self):
        return [_base64.b64decode(c) for c in (self._info or {}).get("peer_certs") or []]

    get_unverified_chain = get_verified_chain

    def version(self):
        return self._info and self._info.get("version")

    def cipher(self):
        if not self._info:
            return None
        v = self._info.get("version")
        bits = 256 if "256" in self._info.get("cipher", "") or "CHACHA20" in self._info.get("cipher", "") else 128
        return self._info.get("cipher"), v, bits

    def shared_ciphers(self):
        c = self.cipher()
        return [c] if c else None

    def selected_alpn_protocol(self):
        return (self._info or {}).get("alpn") or None

    def selected_npn_protocol(self):
        return None

    def compression(self):
        return None

    def pending(self):
        return 0

    def read(self, len=1024, buffer=None):
        if buffer is not None:
            return self.recv_into(buffer, len)
        return self.recv(len)

    def write(self, data):
        return self.send(data)

    def unwrap(self):
        raise NotImplementedError("secexec: a TLS session cannot be unwrapped")

    def verify_client_post_handshake(self):
        raise NotImplementedError("post-handshake authentication is not available")

    def get_channel_binding(self, cb_type="tls-unique"):
        return None

    def recv(self, buflen=1024, flags=0):
        if flags:
            raise ValueError("non-zero flags not allowed in calls to recv() on %s" % self.__class__)
        return super().recv(buflen)

    def recv_into(self, buffer, nbytes=None, flags=0):
        if flags:
            raise ValueError("non-zero flags not allowed in calls to recv_into() on %s" % self.__class__)
        return super().recv_into(buffer, nbytes or 0)

    def send(self, data, flags=0):
        if flags:
            raise ValueError("non-zero flags not allowed in calls to send() on %s" % self.__class__)
        return super().send(data)

    def sendall(self, data, flags=0):
        if flags:
            raise ValueError("non-zero flags not allowed in calls to sendall() on %s" % self.__class__)
        return super().sendall(data)

    def sendto(self, *args):
        raise TypeError("sendto not allowed on instances of %s" % self.__class__)

    def recvfrom(self, *args):
        raise ValueError("recvfrom not allowed on instances of %s" % self.__class__)


SSLContext.sslsocket_class = SSLSocket


class MemoryBIO:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("secexec: MemoryBIO is not available; TLS runs in the kernel on sockets")


class SSLObject:
    def __init__(self, *args, **kwargs):
        raise TypeError("SSLObject is not available in secexec's ssl")


class SSLSession:
    pass


def wrap_socket(sock, keyfile=None, certfile=None, server_side=False, cert_reqs=CERT_NONE,
                ssl_version=PROTOCOL_TLS, ca_certs=None, do_handshake_on_connect=True,
                suppress_ragged_eofs=True, ciphers=None):
    ctx = SSLContext(ssl_version)
    ctx.verify_mode = cert_reqs
    if ca_certs:
        ctx.load_verify_locations(ca_certs)
    if certfile:
        ctx.load_cert_chain(certfile, keyfile)
    return ctx.wrap_socket(sock, server_side=server_side, do_handshake_on_connect=do_handshake_on_connect,
                           suppress_ragged_eofs=suppress_ragged_eofs)
