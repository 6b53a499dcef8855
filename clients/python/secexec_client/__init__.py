"""A client of the secexec HTTP API (docs/api.md), synchronous and asyncio.

    from secexec_client import Client

    with Client("http://127.0.0.1:8080", token) as c, c.new_vm() as vm:
        res = vm.exec("echo hi")
        assert res.stdout == b"hi\\n"

AsyncClient has the same shape with coroutines (and async iterators).
"""

from ._async import AsyncClient, AsyncFS, AsyncJS, AsyncJSContext, AsyncProcess, AsyncVM
from ._core import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    JSON,
    PTY,
    APIError,
    ExecResult,
    ExitStatus,
    FileInfo,
    Limits,
    Output,
    Preview,
    ProcessDone,
    ProcessResult,
    ProtocolError,
    SecexecError,
    Snapshot,
    VMInfo,
)
from ._sse import ServerSentEvent, SSEDecoder, SSEError
from ._sync import FS, JS, VM, Client, JSContext, Process, nodelay_transport

__version__ = "0.2.0"

__all__ = [
    "APIError",
    "AsyncClient",
    "AsyncFS",
    "AsyncJS",
    "AsyncJSContext",
    "AsyncProcess",
    "AsyncVM",
    "Client",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_TIMEOUT",
    "ExecResult",
    "ExitStatus",
    "FS",
    "FileInfo",
    "JS",
    "JSContext",
    "JSON",
    "Limits",
    "Output",
    "PTY",
    "Preview",
    "Process",
    "ProcessDone",
    "ProcessResult",
    "ProtocolError",
    "ROUTES",
    "SSEDecoder",
    "SSEError",
    "SecexecError",
    "ServerSentEvent",
    "Snapshot",
    "VM",
    "VMInfo",
    "__version__",
    "nodelay_transport",
]

# The routes this client uses, as they appear in openapi.json (checked by
# the Go test clients/clients_test.go; test_client.py checks that the
# requests it makes are these).
ROUTES = [
    "GET /healthz",
    "POST /v1/vms",
    "GET /v1/vms",
    "GET /v1/vms/{id}",
    "DELETE /v1/vms/{id}",
    "POST /v1/vms/{id}/exec",
    "POST /v1/vms/{id}/processes",
    "DELETE /v1/vms/{id}/processes/{pid}",
    "GET /v1/vms/{id}/processes/{pid}/ws",
    "GET /v1/vms/{id}/files/{path}",
    "PUT /v1/vms/{id}/files/{path}",
    "DELETE /v1/vms/{id}/files/{path}",
    "GET /v1/vms/{id}/archive",
    "PUT /v1/vms/{id}/archive",
    "POST /v1/vms/{id}/js/evaluate",
    "POST /v1/vms/{id}/js/execute",
    "POST /v1/vms/{id}/contexts",
    "POST /v1/vms/{id}/contexts/{cid}/evaluate",
    "DELETE /v1/vms/{id}/contexts/{cid}",
    "PATCH /v1/vms/{id}",
    "POST /v1/vms/{id}/pause",
    "POST /v1/vms/{id}/resume",
    "POST /v1/vms/{id}/fork",
    "POST /v1/vms/{id}/snapshots",
    "GET /v1/snapshots",
    "GET /v1/snapshots/{sid}",
    "DELETE /v1/snapshots/{sid}",
    "POST /v1/vms/{id}/previews",
    "DELETE /v1/vms/{id}/previews/{pid}",
]
