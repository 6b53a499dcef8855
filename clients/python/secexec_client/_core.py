"""What the sync and async clients share: types, errors, and each API call
as data (the request to send, the parser of its answer), so that the two
clients differ only in how they send."""

from __future__ import annotations

import base64
import datetime
import email.utils
import io
import json
import posixpath
import struct
import tarfile
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Literal, Mapping, Optional, Sequence, TypeVar, Union, cast

from ._sse import ServerSentEvent

T = TypeVar("T")

#: How often a request refused for the moment (429, or 503 other than
#: engine_lost) is tried again, by default.
DEFAULT_MAX_RETRIES = 3
#: The longest wait before one retry, whatever Retry-After asks (seconds).
DEFAULT_MAX_RETRY_WAIT = 10.0
#: The bound of each call that is not an exec, a stream or a file
#: transfer (seconds).
DEFAULT_TIMEOUT = 60.0
#: Bounds of what the client reads and sends.
MAX_STDIN = 16 << 20
MAX_EVENT = 1 << 20
MAX_FRAME = 1 << 20
MAX_ERROR_BODY = 64 << 10
#: The largest answer read whole (a file, an archive, a listing).
MAX_ANSWER = 1 << 30
STDIN_CHUNK = 32 << 10

# The tags of the process WebSocket's binary frames (docs/api.md).
TAG_STDIN, TAG_STDOUT, TAG_STDERR, TAG_EXIT, TAG_STDIN_EOF, TAG_SIGNAL, TAG_RESIZE = range(7)

JSON = Any
"""A JSON value as json.loads returns it."""


class SecexecError(Exception):
    """The base of this package's errors."""


class APIError(SecexecError):
    """An error answer of the server: HTTP status, stable code (e.g. "not_found"),
    message, and the Retry-After it asked for (seconds), if any."""

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class ProcessDone(SecexecError):
    """A write, signal or resize to a process whose session has ended."""


class ProtocolError(SecexecError):
    """The server's answer broke the API's format (an exec stream without an exit, a bad frame)."""


Outcome = Literal["succeeded", "failed", "cancelled", "timed_out"]


@dataclass(frozen=True)
class ExecResult:
    """How an exec ended. stdout and stderr are empty when the output was streamed."""

    exit_code: int
    outcome: str
    stdout: bytes = b""
    stderr: bytes = b""
    truncated: bool = False
    duration: float = 0.0
    #: The signal that killed the program, if one did.
    signal: str = ""
    #: Which limit ended a timed_out exec: "timeout" or "cpu_time".
    reason: str = ""


@dataclass(frozen=True)
class Output:
    """A chunk of a program's output, as it was produced."""

    stream: Literal["stdout", "stderr"]
    data: bytes


@dataclass(frozen=True)
class ExitStatus:
    """How a spawned process ended."""

    exit_code: int
    signal: str = ""


@dataclass(frozen=True)
class ProcessResult:
    """A spawned process's exit status and the output read by wait()."""

    exit_code: int
    signal: str = ""
    stdout: bytes = b""
    stderr: bytes = b""


@dataclass(frozen=True)
class PTY:
    """A terminal of rows x cols (1-1000 each) for a spawned process; term is its TERM."""

    rows: int = 24
    cols: int = 80
    term: str = ""


@dataclass(frozen=True)
class Limits:
    """A VM's resource limits; None takes the server's default. Times in seconds."""

    fs_bytes: Optional[int] = None
    processes: Optional[int] = None
    memory_bytes: Optional[int] = None
    vm_memory_bytes: Optional[int] = None
    cpu_time: Optional[float] = None
    vm_cpu_time: Optional[float] = None


@dataclass(frozen=True)
class VMInfo:
    """A VM on the server."""

    id: str
    created_at: str = ""
    last_used_at: str = ""
    idle_timeout: float = 0.0
    processes: int = 0
    engine: str = ""
    #: "running", "paused", or "lost" when its engine process died (lost_reason says how).
    state: str = ""
    lost_reason: str = ""
    labels: Dict[str, str] = field(default_factory=lambda: {})
    #: When the VM's TTL closes it ("" without a TTL).
    expires_at: str = ""


@dataclass(frozen=True)
class Snapshot:
    """A saved VM (VM.snapshot); new_vm(from_snapshot=id) restores it."""

    id: str
    created_at: str = ""
    files: int = 0
    bytes: int = 0
    #: What storing it added (contents already stored are shared).
    stored_bytes: int = 0
    labels: Dict[str, str] = field(default_factory=lambda: {})
    restart: List[List[str]] = field(default_factory=lambda: [])


@dataclass(frozen=True)
class Preview:
    """A signed, expiring URL that opens a guest's port with no credentials."""

    id: str
    url: str
    port: int
    expires_at: str = ""


@dataclass(frozen=True)
class FileInfo:
    """A file's attributes; type is "file", "dir", "symlink" or another kind."""

    name: str
    type: str
    mode: int = 0
    size: int = 0
    mod_time: str = ""
    uid: int = 0
    gid: int = 0

    @property
    def is_dir(self) -> bool:
        """Whether the file is a directory."""
        return self.type == "dir"


# -- calls


class Collector:
    """Gathers a body's chunks, keeping at most limit + 1 bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()

    def add(self, chunk: bytes) -> bool:
        """Adds chunk; False once the body is over the limit."""
        self.buf += chunk[: self.limit + 1 - len(self.buf)]
        return len(self.buf) <= self.limit


@dataclass
class Call:
    """One request: path is below the base URL and already escaped."""

    method: str
    path: str
    params: Optional[Dict[str, str]] = None
    content: Optional[bytes] = None
    content_type: Optional[str] = None
    accept: Optional[str] = None
    # control: bounded by the client's timeout (execs, evaluations and
    # transfers are bounded by their own limits instead).
    control: bool = True
    headers: Dict[str, str] = field(default_factory=lambda: {})

    def header_map(self, token: str) -> Dict[str, str]:
        h = dict(self.headers)
        if token:
            h["Authorization"] = "Bearer " + token
        if self.content_type:
            h["Content-Type"] = self.content_type
        if self.accept:
            h["Accept"] = self.accept
        return h


@dataclass
class Op(Generic[T]):
    """A call and the parser of its 2xx answer's body."""

    call: Call
    parse: Callable[[bytes], T]


def json_call(method: str, path: str, payload: JSON, control: bool = True) -> Call:
    return Call(method, path, content=json.dumps(payload).encode(), content_type="application/json", control=control)


def _none(_: bytes) -> None:
    return None


def _json_obj(data: bytes) -> Dict[str, Any]:
    try:
        v: Any = json.loads(data)
    except ValueError as e:
        raise ProtocolError(f"the answer is not JSON: {e}") from None
    if not isinstance(v, dict):
        raise ProtocolError("the answer is not a JSON object")
    return cast(Dict[str, Any], v)


def _str(d: Mapping[str, Any], k: str) -> str:
    v = d.get(k)
    return v if isinstance(v, str) else ""


def _int(d: Mapping[str, Any], k: str) -> int:
    v = d.get(k)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _list(d: Mapping[str, Any], k: str) -> List[Dict[str, Any]]:
    v = d.get(k)
    if not isinstance(v, list):
        raise ProtocolError(f"the answer lacks the list {k!r}")
    return [cast(Dict[str, Any], e) for e in cast(List[Any], v) if isinstance(e, dict)]


def vm_path(vm_id: str, sub: str = "") -> str:
    return "/v1/vms/" + urllib.parse.quote(vm_id, safe="") + sub


def file_path(vm_id: str, name: str) -> str:
    if not name.startswith("/") or "\0" in name:
        raise ValueError(f"{name!r}: want an absolute guest path")
    return vm_path(vm_id, "/files") + urllib.parse.quote(posixpath.normpath(name), safe="/")


def _ms(seconds: Optional[float]) -> int:
    if seconds is None:
        return 0
    if seconds < 0:
        raise ValueError("a negative duration")
    return max(1, round(seconds * 1000)) if seconds > 0 else 0


# -- VMs


def _labels(d: Mapping[str, Any]) -> Dict[str, str]:
    v = d.get("labels")
    if not isinstance(v, dict):
        return {}
    return {str(k): x for k, x in cast(Dict[Any, Any], v).items() if isinstance(x, str)}


def parse_vm(d: Mapping[str, Any]) -> VMInfo:
    return VMInfo(
        labels=_labels(d),
        expires_at=_str(d, "expires_at"),
        id=_str(d, "id"),
        created_at=_str(d, "created_at"),
        last_used_at=_str(d, "last_used_at"),
        idle_timeout=_int(d, "idle_timeout_ms") / 1000,
        processes=_int(d, "processes"),
        engine=_str(d, "engine"),
        state=_str(d, "state"),
        lost_reason=_str(d, "lost_reason"),
    )


def create_vm(
    permissions: Optional[Mapping[str, Any]],
    limits: Optional[Limits],
    env: Optional[Mapping[str, str]],
    cwd: str,
    hostname: str,
    clock: str,
    mounts: Optional[Sequence[Mapping[str, Any]]],
    idle_timeout: Optional[float],
    engine: str,
    from_snapshot: str = "",
    labels: Optional[Mapping[str, str]] = None,
    ttl: Optional[float] = None,
) -> Op[VMInfo]:
    body: Dict[str, Any] = {}
    if from_snapshot:
        body["from_snapshot"] = from_snapshot
    if labels:
        body["labels"] = dict(labels)
    if ttl:
        body["ttl_ms"] = _ms(ttl)
    if permissions is not None:
        body["permissions"] = dict(permissions)
    if limits is not None:
        lim = {
            "fs_bytes": limits.fs_bytes,
            "processes": limits.processes,
            "memory_bytes": limits.memory_bytes,
            "vm_memory_bytes": limits.vm_memory_bytes,
            "cpu_time_ms": _ms(limits.cpu_time) or None,
            "vm_cpu_time_ms": _ms(limits.vm_cpu_time) or None,
        }
        body["limits"] = {k: v for k, v in lim.items() if v}
    for k, v in (("cwd", cwd), ("hostname", hostname), ("clock", clock), ("engine", engine)):
        if v:
            body[k] = v
    if env:
        body["env"] = dict(env)
    if mounts:
        body["mounts"] = [dict(m) for m in mounts]
    if idle_timeout:
        body["idle_timeout_ms"] = _ms(idle_timeout)
    return Op(json_call("POST", "/v1/vms", body), lambda b: parse_vm(_json_obj(b)))


def list_vms(labels: Optional[Mapping[str, str]] = None, state: str = "") -> Op[List[VMInfo]]:
    query = urllib.parse.urlencode([("label", f"{k}={v}") for k, v in (labels or {}).items()] + ([("state", state)] if state else []))
    return Op(Call("GET", "/v1/vms" + ("?" + query if query else "")), lambda b: [parse_vm(v) for v in _list(_json_obj(b), "vms")])


def patch_vm(vm_id: str, ttl: Optional[float], labels: Optional[Mapping[str, str]]) -> Op[VMInfo]:
    body: Dict[str, Any] = {}
    if ttl is not None:
        body["ttl_ms"] = _ms(ttl)
    if labels is not None:
        body["labels"] = dict(labels)
    return Op(json_call("PATCH", vm_path(vm_id), body), lambda b: parse_vm(_json_obj(b)))


def pause_vm(vm_id: str, restart: Optional[Sequence[Sequence[str]]]) -> Op[VMInfo]:
    body: Dict[str, Any] = {"restart": [list(a) for a in restart]} if restart else {}
    return Op(json_call("POST", vm_path(vm_id, "/pause"), body), lambda b: parse_vm(_json_obj(b)))


def resume_vm(vm_id: str) -> Op[VMInfo]:
    return Op(Call("POST", vm_path(vm_id, "/resume")), lambda b: parse_vm(_json_obj(b)))


def fork_vm(vm_id: str) -> Op[VMInfo]:
    return Op(Call("POST", vm_path(vm_id, "/fork")), lambda b: parse_vm(_json_obj(b)))


def parse_snapshot(d: Mapping[str, Any]) -> Snapshot:
    restart: List[List[str]] = []
    raw = d.get("restart")
    if isinstance(raw, list):
        for argv in cast(List[Any], raw):
            if isinstance(argv, list):
                restart.append([str(a) for a in cast(List[Any], argv)])
    return Snapshot(
        id=_str(d, "id"),
        created_at=_str(d, "created_at"),
        files=_int(d, "files"),
        bytes=_int(d, "bytes"),
        stored_bytes=_int(d, "stored_bytes"),
        labels=_labels(d),
        restart=restart,
    )


def create_snapshot(vm_id: str, labels: Optional[Mapping[str, str]], restart: Optional[Sequence[Sequence[str]]]) -> Op[Snapshot]:
    body: Dict[str, Any] = {}
    if labels:
        body["labels"] = dict(labels)
    if restart:
        body["restart"] = [list(a) for a in restart]
    return Op(json_call("POST", vm_path(vm_id, "/snapshots"), body), lambda b: parse_snapshot(_json_obj(b)))


def list_snapshots() -> Op[List[Snapshot]]:
    return Op(Call("GET", "/v1/snapshots"), lambda b: [parse_snapshot(v) for v in _list(_json_obj(b), "snapshots")])


def snapshot_path(sid: str) -> str:
    return "/v1/snapshots/" + urllib.parse.quote(sid, safe="")


def get_snapshot(sid: str) -> Op[Snapshot]:
    return Op(Call("GET", snapshot_path(sid)), lambda b: parse_snapshot(_json_obj(b)))


def delete_snapshot(sid: str) -> Op[None]:
    return Op(Call("DELETE", snapshot_path(sid)), _none)


def parse_preview(d: Mapping[str, Any]) -> Preview:
    return Preview(id=_str(d, "id"), url=_str(d, "url"), port=_int(d, "port"), expires_at=_str(d, "expires_at"))


def create_preview(vm_id: str, port: int, ttl: Optional[float]) -> Op[Preview]:
    body: Dict[str, Any] = {"port": port}
    if ttl:
        body["ttl_seconds"] = max(1, round(ttl))
    return Op(json_call("POST", vm_path(vm_id, "/previews"), body), lambda b: parse_preview(_json_obj(b)))


def revoke_preview(vm_id: str, pid: str) -> Op[None]:
    return Op(Call("DELETE", vm_path(vm_id, "/previews/" + urllib.parse.quote(pid, safe=""))), _none)


def get_vm(vm_id: str) -> Op[VMInfo]:
    return Op(Call("GET", vm_path(vm_id)), lambda b: parse_vm(_json_obj(b)))


def delete_vm(vm_id: str) -> Op[None]:
    return Op(Call("DELETE", vm_path(vm_id)), _none)


def healthz() -> Op[None]:
    return Op(Call("GET", "/healthz"), _none)


# -- exec


def parse_result(d: Mapping[str, Any]) -> ExecResult:
    def b64(k: str) -> bytes:
        v = d.get(k)
        return base64.b64decode(v) if isinstance(v, str) else b""

    return ExecResult(
        exit_code=_int(d, "exit_code"),
        outcome=_str(d, "outcome"),
        stdout=b64("stdout"),
        stderr=b64("stderr"),
        truncated=d.get("truncated") is True,
        duration=_int(d, "duration_ms") / 1000,
        signal=_str(d, "signal"),
        reason=_str(d, "reason"),
    )


def exec_call(
    vm_id: str,
    sub: str,
    body: Dict[str, Any],
    stdin: Optional[bytes],
    env: Optional[Mapping[str, str]],
    cwd: str,
    timeout: Optional[float],
    max_output: Optional[int],
    stream: bool,
) -> Call:
    """The request of an exec-like route (/exec, /js/execute, /js/evaluate)."""
    if stdin:
        if len(stdin) > MAX_STDIN:
            raise APIError(0, "too_large", f"stdin over {MAX_STDIN} bytes (use spawn to stream it)")
        body["stdin"] = base64.b64encode(stdin).decode()
    if env:
        body["env"] = dict(env)
    if cwd:
        body["cwd"] = cwd
    if timeout:
        body["timeout_ms"] = _ms(timeout)
    if max_output:
        if max_output < 0:
            raise ValueError("a negative max_output")
        body["max_output"] = max_output
    call = json_call("POST", vm_path(vm_id, sub), body, control=False)
    if stream:
        call.accept = "text/event-stream"
    return call


def command(cmd: Union[str, Sequence[str]]) -> Dict[str, Any]:
    """The body's command: a string is a command line, a sequence an argv."""
    if isinstance(cmd, str):
        if not cmd.strip():
            raise ValueError("an empty command line")
        return {"cmd": cmd}
    argv = list(cmd)
    if not argv:
        raise ValueError("an empty argv")
    return {"argv": argv}


def parse_exec(data: bytes) -> ExecResult:
    return parse_result(_json_obj(data))


class ExecEvents:
    """Turns an exec's server-sent events into Output chunks and its ExecResult.

    An error event is the exec's error unless an exit follows (output over
    the limit ends with both)."""

    def __init__(self) -> None:
        self.result: Optional[ExecResult] = None
        self._err: Optional[APIError] = None

    def handle(self, ev: ServerSentEvent) -> Optional[Union[Output, ExecResult]]:
        if self.result is not None:
            return None
        try:
            d = _json_obj(ev.data.encode())
        except ProtocolError:
            raise ProtocolError(f"a bad {ev.event} event") from None
        if ev.event in ("stdout", "stderr"):
            data = d.get("data")
            return Output("stdout" if ev.event == "stdout" else "stderr", base64.b64decode(data) if isinstance(data, str) else b"")
        if ev.event == "error":
            self._err = APIError(200, _str(d, "code"), _str(d, "message"))
        elif ev.event == "exit":
            r = parse_result(d)
            self.result = ExecResult(r.exit_code, r.outcome, b"", b"", r.truncated, r.duration, r.signal, r.reason)
            self._err = None
            return self.result
        return None

    def finish(self) -> ExecResult:
        if self.result is not None:
            return self.result
        if self._err is not None:
            raise self._err
        raise ProtocolError("the exec's event stream ended before its exit")


# -- files


def read_file(vm_id: str, name: str) -> Op[bytes]:
    return Op(Call("GET", file_path(vm_id, name), control=False), lambda b: b)


def write_file(vm_id: str, name: str, data: bytes) -> Op[None]:
    return Op(Call("PUT", file_path(vm_id, name), content=bytes(data), content_type="application/octet-stream", control=False), _none)


def parse_stat(d: Mapping[str, Any]) -> FileInfo:
    return FileInfo(
        name=_str(d, "name"),
        type=_str(d, "type"),
        mode=_int(d, "mode") & 0o777,
        size=_int(d, "size"),
        mod_time=_str(d, "mtime"),
        uid=_int(d, "uid"),
        gid=_int(d, "gid"),
    )


def lstat(vm_id: str, name: str) -> Op[FileInfo]:
    return Op(Call("GET", file_path(vm_id, name), params={"stat": ""}), lambda b: parse_stat(_json_obj(b)))


def read_dir(vm_id: str, name: str) -> Op[List[FileInfo]]:
    return Op(Call("GET", file_path(vm_id, name), params={"list": ""}), lambda b: [parse_stat(e) for e in _list(_json_obj(b), "entries")])


def mkdir_all(vm_id: str, name: str) -> Op[None]:
    return Op(Call("PUT", file_path(vm_id, name), params={"mkdir": ""}), _none)


def remove(vm_id: str, name: str, recursive: bool) -> Op[None]:
    return Op(Call("DELETE", file_path(vm_id, name), params={"recursive": ""} if recursive else None), _none)


def read_archive(vm_id: str, directory: str) -> Op[bytes]:
    file_path(vm_id, directory)
    return Op(Call("GET", vm_path(vm_id, "/archive"), params={"path": directory}, control=False), lambda b: b)


def write_archive(vm_id: str, directory: str, tar: bytes) -> Op[None]:
    file_path(vm_id, directory)
    call = Call("PUT", vm_path(vm_id, "/archive"), params={"path": directory}, content=bytes(tar), content_type="application/x-tar", control=False)
    return Op(call, _none)


def tar_of(files: Mapping[str, bytes]) -> bytes:
    """A tar of files (relative name -> bytes)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def files_of(tar: bytes, max_bytes: int = 1 << 30) -> Dict[str, bytes]:
    """The regular files of a tar (relative name -> bytes), at most max_bytes in all."""
    out: Dict[str, bytes] = {}
    total = 0
    with tarfile.open(fileobj=io.BytesIO(tar), mode="r") as tf:
        for m in tf.getmembers():
            if not m.isfile():
                continue
            total += m.size
            if total > max_bytes:
                raise APIError(0, "too_large", f"the archive's files are over {max_bytes} bytes")
            f = tf.extractfile(m)
            if f is not None:
                out[m.name] = f.read()
    return out


# -- JavaScript


def parse_value(data: bytes) -> JSON:
    return _json_obj(data).get("value")


def new_context(vm_id: str, timeout: Optional[float]) -> Op[str]:
    body = {"timeout_ms": _ms(timeout)} if timeout else {}
    return Op(json_call("POST", vm_path(vm_id, "/contexts"), body), lambda b: _str(_json_obj(b), "id"))


def context_path(vm_id: str, cid: str) -> str:
    return vm_path(vm_id, "/contexts/" + urllib.parse.quote(cid, safe=""))


def context_evaluate(vm_id: str, cid: str, code: str) -> Op[JSON]:
    return Op(json_call("POST", context_path(vm_id, cid) + "/evaluate", {"code": code}, control=False), parse_value)


def delete_context(vm_id: str, cid: str) -> Op[None]:
    return Op(Call("DELETE", context_path(vm_id, cid)), _none)


# -- processes


def spawn(vm_id: str, argv: Sequence[str], env: Optional[Mapping[str, str]], cwd: str, pty: Optional[PTY]) -> Op[int]:
    argv = list(argv)
    if not argv:
        raise ValueError("an empty argv")
    body: Dict[str, Any] = {"argv": argv}
    if env:
        body["env"] = dict(env)
    if cwd:
        body["cwd"] = cwd
    if pty is not None:
        check_size(pty.rows, pty.cols)
        body["pty"] = {"rows": pty.rows, "cols": pty.cols, **({"term": pty.term} if pty.term else {})}
    return Op(json_call("POST", vm_path(vm_id, "/processes"), body), lambda b: _int(_json_obj(b), "pid"))


def process_path(vm_id: str, pid: int) -> str:
    return vm_path(vm_id, f"/processes/{pid}")


def kill_process(vm_id: str, pid: int) -> Op[None]:
    return Op(Call("DELETE", process_path(vm_id, pid)), _none)


def ws_url(base: str, path: str) -> str:
    u = urllib.parse.urlsplit(base + path)
    return urllib.parse.urlunsplit(("wss" if u.scheme == "https" else "ws", u.netloc, u.path, u.query, ""))


def check_size(rows: int, cols: int) -> None:
    if not (1 <= rows <= 1000 and 1 <= cols <= 1000):
        raise ValueError(f"a terminal of {rows}x{cols}: rows and cols are 1-1000")


def signal_frame(sig: int) -> bytes:
    if not 1 <= sig <= 64:
        raise ValueError(f"signal {sig}: signals are 1-64")
    return bytes([TAG_SIGNAL, sig])


def resize_frame(rows: int, cols: int) -> bytes:
    check_size(rows, cols)
    return bytes([TAG_RESIZE]) + struct.pack(">HH", rows, cols)


def stdin_frames(data: bytes) -> List[bytes]:
    return [bytes([TAG_STDIN]) + data[i : i + STDIN_CHUNK] for i in range(0, len(data), STDIN_CHUNK)]


def parse_frame(pid: int, msg: Union[str, bytes]) -> Union[Output, ExitStatus]:
    """A server frame: output or the exit status."""
    if isinstance(msg, str) or not msg:
        raise ProtocolError(f"process {pid}: a frame without a tag")
    if msg[0] == TAG_STDOUT:
        return Output("stdout", msg[1:])
    if msg[0] == TAG_STDERR:
        return Output("stderr", msg[1:])
    if msg[0] == TAG_EXIT:
        try:
            d = _json_obj(msg[1:])
        except ProtocolError:
            raise ProtocolError(f"process {pid}: a bad exit frame") from None
        return ExitStatus(_int(d, "exit_code"), _str(d, "signal"))
    raise ProtocolError(f"process {pid}: unknown frame tag {msg[0]}")


# -- retries and errors


def api_error(status: int, retry_after_header: Optional[str], body: bytes) -> APIError:
    """The APIError of a non-2xx answer."""
    retry_after = parse_retry_after(retry_after_header)
    try:
        err = _json_obj(body).get("error")
        if isinstance(err, dict):
            e = cast(Dict[str, Any], err)
            if _str(e, "code"):
                return APIError(status, _str(e, "code"), _str(e, "message"), retry_after)
    except ProtocolError:
        pass
    # Not the API's shape: a proxy in between, or not a secexec server.
    msg = body[:MAX_ERROR_BODY].decode("utf-8", "replace").strip() or f"HTTP {status}"
    return APIError(status, code_for_status(status), msg, retry_after)


def code_for_status(status: int) -> str:
    return {429: "quota_exceeded", 503: "shutting_down", 401: "unauthorized", 404: "not_found", 403: "forbidden"}.get(status, "internal")


def retryable(e: APIError) -> bool:
    """Refused before any work was done, so the same request may be sent again.
    A lost engine (503 engine_lost) took the VM with it: trying again cannot help."""
    return e.status == 429 or (e.status == 503 and e.code != "engine_lost")


def parse_retry_after(v: Optional[str]) -> Optional[float]:
    """A Retry-After header's wait in seconds: a number or an HTTP date."""
    if not v:
        return None
    v = v.strip()
    if v.isdigit():
        return float(min(int(v), 24 * 3600))
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())


def retry_wait(retry_after: Optional[float], attempt: int, limit: float) -> float:
    """The wait before retry attempt+1: Retry-After if the server said, else an
    exponential back-off from 100 ms; capped by limit."""
    d = retry_after if retry_after else 0.1 * (1 << min(attempt, 10))
    return min(d, limit)


@dataclass
class RetryPolicy:
    """When a refused call is tried again; shared by both clients."""

    max_retries: int
    max_retry_wait: float
    timeout: Optional[float]

    def deadline(self, call: Call) -> Optional[float]:
        if call.control and self.timeout:
            return time.monotonic() + self.timeout
        return None

    def wait(self, err: APIError, attempt: int, deadline: Optional[float]) -> Optional[float]:
        """Seconds to wait before trying again, or None: the refusal is the answer."""
        if not retryable(err) or self.max_retries < 0 or attempt >= self.max_retries:
            return None
        w = retry_wait(err.retry_after, attempt, self.max_retry_wait)
        if deadline is not None and deadline - time.monotonic() < w:
            return None  # no time left to wait
        return w
