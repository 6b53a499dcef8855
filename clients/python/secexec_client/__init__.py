"""A small client for the secexec HTTP API (docs/api.md), standard library only.

    from secexec_client import Client
    c = Client("http://127.0.0.1:8080", token)
    vm = c.create_vm()
    res = c.exec(vm["id"], cmd="echo hi")
    assert res.stdout == b"hi\\n"
"""

import base64
import io
import json
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

__all__ = ["Client", "APIError", "ExecResult"]

# The routes this client uses, as they appear in openapi.json (checked by
# the Go test clients/clients_test.go).
ROUTES = [
    "GET /healthz",
    "POST /v1/vms",
    "GET /v1/vms",
    "GET /v1/vms/{id}",
    "DELETE /v1/vms/{id}",
    "POST /v1/vms/{id}/exec",
    "GET /v1/vms/{id}/files/{path}",
    "PUT /v1/vms/{id}/files/{path}",
    "DELETE /v1/vms/{id}/files/{path}",
    "GET /v1/vms/{id}/archive",
    "PUT /v1/vms/{id}/archive",
    "POST /v1/vms/{id}/js/evaluate",
    "POST /v1/vms/{id}/contexts",
    "POST /v1/vms/{id}/contexts/{cid}/evaluate",
    "DELETE /v1/vms/{id}/contexts/{cid}",
]


class APIError(Exception):
    """An error answer: HTTP status, stable code (e.g. "not_found") and message."""

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[str] = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


@dataclass
class ExecResult:
    exit_code: int
    outcome: str
    stdout: bytes
    stderr: bytes
    truncated: bool
    duration_ms: int
    signal: str = ""
    # which limit ended a timed_out exec: "timeout" (wall clock) or "cpu_time"
    reason: str = ""


def _result(d: Dict[str, Any]) -> ExecResult:
    return ExecResult(
        exit_code=d["exit_code"],
        outcome=d["outcome"],
        stdout=base64.b64decode(d.get("stdout", "")),
        stderr=base64.b64decode(d.get("stderr", "")),
        truncated=d.get("truncated", False),
        duration_ms=d.get("duration_ms", 0),
        signal=d.get("signal", ""),
        reason=d.get("reason", ""),
    )


class Client:
    """A client of one secexec server, authenticated by a bearer token."""

    def __init__(self, base_url: str, token: str, timeout: float = 300.0):
        self.base = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # -- plumbing

    def _request(self, method: str, path: str, body: Optional[bytes] = None,
                 content_type: Optional[str] = None, accept: Optional[str] = None):
        req = urllib.request.Request(self.base + path, data=body, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if content_type:
            req.add_header("Content-Type", content_type)
        if accept:
            req.add_header("Accept", accept)
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            data = e.read()
            try:
                err = json.loads(data)["error"]
                raise APIError(e.code, err["code"], err["message"], e.headers.get("Retry-After")) from None
            except (ValueError, KeyError, TypeError):
                raise APIError(e.code, "http_error", data.decode("utf-8", "replace")) from None

    def _json(self, method: str, path: str, payload: Any = None) -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        with self._request(method, path, body, "application/json" if body is not None else None) as r:
            data = r.read()
        return json.loads(data) if data else None

    @staticmethod
    def _vm(vm_id: str) -> str:
        return "/v1/vms/" + urllib.parse.quote(vm_id, safe="")

    @staticmethod
    def _file(path: str) -> str:
        return "/files/" + urllib.parse.quote(path.lstrip("/"), safe="/")

    # -- VMs

    def healthy(self) -> bool:
        with self._request("GET", "/healthz") as r:
            return r.status == 200

    def create_vm(self, **options: Any) -> Dict[str, Any]:
        """Create a VM; options are the fields of CreateVM (permissions, limits, env, ...)."""
        return self._json("POST", "/v1/vms", options)

    def list_vms(self) -> List[Dict[str, Any]]:
        return self._json("GET", "/v1/vms")["vms"]

    def get_vm(self, vm_id: str) -> Dict[str, Any]:
        return self._json("GET", self._vm(vm_id))

    def delete_vm(self, vm_id: str) -> None:
        self._json("DELETE", self._vm(vm_id))

    # -- exec

    def _exec_body(self, cmd, argv, stdin, env, cwd, timeout_ms) -> Dict[str, Any]:
        body: Dict[str, Any] = {}
        if cmd is not None:
            body["cmd"] = cmd
        if argv is not None:
            body["argv"] = list(argv)
        if stdin:
            body["stdin"] = base64.b64encode(stdin).decode()
        if env:
            body["env"] = env
        if cwd:
            body["cwd"] = cwd
        if timeout_ms:
            body["timeout_ms"] = timeout_ms
        return body

    def exec(self, vm_id: str, cmd: Optional[str] = None, argv: Optional[List[str]] = None,
             stdin: bytes = b"", env: Optional[Dict[str, str]] = None, cwd: str = "",
             timeout_ms: int = 0) -> ExecResult:
        """Run a command line (cmd) or argument vector (argv) and wait for it."""
        return _result(self._json("POST", self._vm(vm_id) + "/exec",
                                  self._exec_body(cmd, argv, stdin, env, cwd, timeout_ms)))

    def exec_stream(self, vm_id: str, cmd: Optional[str] = None, argv: Optional[List[str]] = None,
                    stdin: bytes = b"", env: Optional[Dict[str, str]] = None, cwd: str = "",
                    timeout_ms: int = 0) -> Iterator[Tuple[str, Any]]:
        """Run a command streaming its output: yields ("stdout", bytes), ("stderr", bytes),
        possibly ("error", {code, message}), and last ("exit", ExecResult without output)."""
        body = json.dumps(self._exec_body(cmd, argv, stdin, env, cwd, timeout_ms)).encode()
        with self._request("POST", self._vm(vm_id) + "/exec", body, "application/json", "text/event-stream") as r:
            event, data = "", ""
            for raw in r:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[len("event: "):]
                elif line.startswith("data: "):
                    data = line[len("data: "):]
                elif line == "" and event:
                    d = json.loads(data)
                    if event in ("stdout", "stderr"):
                        yield event, base64.b64decode(d["data"])
                    elif event == "exit":
                        yield event, _result(d)
                    else:
                        yield event, d
                    event, data = "", ""

    # -- files

    def write_file(self, vm_id: str, path: str, data: bytes) -> None:
        with self._request("PUT", self._vm(vm_id) + self._file(path), data, "application/octet-stream"):
            pass

    def read_file(self, vm_id: str, path: str) -> bytes:
        with self._request("GET", self._vm(vm_id) + self._file(path)) as r:
            return r.read()

    def stat(self, vm_id: str, path: str) -> Dict[str, Any]:
        return self._json("GET", self._vm(vm_id) + self._file(path) + "?stat")

    def list_dir(self, vm_id: str, path: str) -> List[Dict[str, Any]]:
        return self._json("GET", self._vm(vm_id) + self._file(path) + "?list")["entries"]

    def mkdir(self, vm_id: str, path: str) -> None:
        with self._request("PUT", self._vm(vm_id) + self._file(path) + "?mkdir"):
            pass

    def remove(self, vm_id: str, path: str, recursive: bool = False) -> None:
        with self._request("DELETE", self._vm(vm_id) + self._file(path) + ("?recursive" if recursive else "")):
            pass

    def upload_dir(self, vm_id: str, guest_dir: str, files: Dict[str, bytes]) -> None:
        """Unpack files (relative name -> bytes) into guest_dir, as one tar."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        q = urllib.parse.urlencode({"path": guest_dir})
        with self._request("PUT", self._vm(vm_id) + "/archive?" + q, buf.getvalue(), "application/x-tar"):
            pass

    def download_dir(self, vm_id: str, guest_dir: str) -> Dict[str, bytes]:
        """The regular files under guest_dir (relative name -> bytes)."""
        q = urllib.parse.urlencode({"path": guest_dir})
        with self._request("GET", self._vm(vm_id) + "/archive?" + q) as r:
            data = r.read()
        out = {}
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tf:
            for m in tf.getmembers():
                if m.isfile():
                    out[m.name] = tf.extractfile(m).read()
        return out

    # -- JavaScript

    def evaluate(self, vm_id: str, code: str) -> Any:
        """Evaluate a JavaScript expression in the VM; its JSON value."""
        return self._json("POST", self._vm(vm_id) + "/js/evaluate", {"code": code})["value"]

    def create_context(self, vm_id: str, timeout_ms: int = 0) -> str:
        """A persistent JS context (globals kept between evaluations); its id."""
        body = {"timeout_ms": timeout_ms} if timeout_ms else {}
        return self._json("POST", self._vm(vm_id) + "/contexts", body)["id"]

    def context_evaluate(self, vm_id: str, context_id: str, code: str) -> Any:
        path = self._vm(vm_id) + "/contexts/" + urllib.parse.quote(context_id, safe="") + "/evaluate"
        return self._json("POST", path, {"code": code})["value"]

    def delete_context(self, vm_id: str, context_id: str) -> None:
        self._json("DELETE", self._vm(vm_id) + "/contexts/" + urllib.parse.quote(context_id, safe=""))
