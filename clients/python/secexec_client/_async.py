"""The asyncio client: _AsyncTransport, AsyncVM and what hangs off them."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import AsyncIterator, Callable, Dict, List, Mapping, Optional, Sequence, Type, TypeVar, Union

import httpx
import websockets.exceptions
from websockets.legacy.client import WebSocketClientProtocol, connect

from ._core import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    JSON,
    MAX_ANSWER,
    MAX_ERROR_BODY,
    MAX_EVENT,
    MAX_FRAME,
    PTY,
    TAG_STDIN_EOF,
    APIError,
    Call,
    Collector,
    ExecEvents,
    ExecResult,
    ExitStatus,
    FileInfo,
    Limits,
    Op,
    Output,
    Preview,
    ProcessDone,
    ProcessResult,
    ProtocolError,
    RetryPolicy,
    Snapshot,
    VMInfo,
    api_error,
    code_for_status,
    command,
    context_evaluate,
    create_preview,
    create_snapshot,
    create_vm,
    delete_context,
    delete_snapshot,
    delete_vm,
    exec_call,
    files_of,
    fork_vm,
    get_snapshot,
    get_vm,
    healthz,
    kill_process,
    list_snapshots,
    list_vms,
    lstat,
    mkdir_all,
    new_context,
    parse_exec,
    parse_frame,
    parse_value,
    patch_vm,
    pause_vm,
    process_path,
    read_archive,
    read_dir,
    read_file,
    remove,
    resize_frame,
    resume_vm,
    revoke_preview,
    signal_frame,
    spawn,
    stdin_frames,
    tar_of,
    write_archive,
    write_file,
    ws_url,
)
from ._sse import SSEDecoder

T = TypeVar("T")


def check_url(base_url: str) -> str:
    u = httpx.URL(base_url)
    if u.scheme not in ("http", "https") or not u.host or u.query or u.fragment:
        raise ValueError(f"{base_url!r}: the server URL must be http:// or https:// with a host")
    return base_url.rstrip("/")


def timeout_of(call: Call, timeout: Optional[float]) -> httpx.Timeout:
    """The control timeout bounds each phase of a control call; other calls
    (execs, evaluations, transfers) only wait that long to connect."""
    if call.control:
        return httpx.Timeout(timeout)
    return httpx.Timeout(None, connect=timeout, pool=timeout)


def new_limits() -> httpx.Limits:
    # Every call of a client goes to one host: keep many connections to it.
    return httpx.Limits(max_connections=100, max_keepalive_connections=32)


class _AsyncTransport:
    """Sends the calls of one AsyncClient and of everything hanging off it."""

    def __init__(self, base: str, token: str, policy: RetryPolicy, http: httpx.AsyncClient) -> None:
        self.base = base
        self.token = token
        self.policy = policy
        self.http = http

    async def open(self, call: Call) -> httpx.Response:
        """Sends call and returns its 2xx answer unread (close it); any other answer raises APIError."""
        deadline = self.policy.deadline(call)
        attempt = 0
        while True:
            req = self.http.build_request(
                call.method, self.base + call.path, params=call.params, content=call.content,
                headers=call.header_map(self.token), timeout=timeout_of(call, self.policy.timeout),
            )
            resp = await self.http.send(req, stream=True)
            if resp.is_success:
                return resp
            body = Collector(MAX_ERROR_BODY)
            try:
                async for chunk in resp.aiter_bytes():
                    if not body.add(chunk):
                        break
            finally:
                await resp.aclose()
            err = api_error(resp.status_code, resp.headers.get("Retry-After"), bytes(body.buf))
            wait = self.policy.wait(err, attempt, deadline)
            if wait is None:
                raise err
            await asyncio.sleep(wait)
            attempt += 1

    async def do(self, op: Op[T]) -> T:
        resp = await self.open(op.call)
        body = Collector(MAX_ANSWER)
        try:
            async for chunk in resp.aiter_bytes():
                if not body.add(chunk):
                    raise ProtocolError(f"{op.call.method} {op.call.path}: an answer over {MAX_ANSWER} bytes")
            return op.parse(bytes(body.buf))
        finally:
            await resp.aclose()

    async def events(self, call: Call) -> AsyncIterator[Union[Output, ExecResult]]:
        resp = await self.open(call)
        try:
            dec, st = SSEDecoder(MAX_EVENT), ExecEvents()
            # Read to the end after the exit (the server ends the stream
            # there) so that the connection is reused.
            async for chunk in resp.aiter_bytes():
                for ev in dec.feed(chunk):
                    item = st.handle(ev)
                    if item is not None:
                        yield item
            st.finish()
        finally:
            await resp.aclose()


class AsyncClient:
    """An asyncio client of one secexec server, acting for the tenant of token.

    One pool of connections serves every call; share one client. Requests
    refused for the moment (429, 503 other than engine_lost) are retried up to
    max_retries times (negative: never), waiting as Retry-After asks (at most
    max_retry_wait seconds). timeout bounds each call that is not an exec, an
    evaluation or a file transfer (None: unbounded); cancel a task to end any
    call."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        policy = RetryPolicy(max_retries, max_retry_wait, timeout)
        http = http_client if http_client is not None else httpx.AsyncClient(limits=new_limits())
        self._t = _AsyncTransport(check_url(base_url), token, policy, http)

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self._t.base

    async def aclose(self) -> None:
        """Closes the client's connections."""
        await self._t.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.aclose()

    async def healthy(self) -> bool:
        """Whether the server answers its health check."""
        try:
            await self._t.do(healthz())
        except (APIError, httpx.HTTPError):
            return False
        return True

    async def new_vm(
        self,
        *,
        permissions: Optional[Mapping[str, JSON]] = None,
        limits: Optional[Limits] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        hostname: str = "",
        clock: str = "",
        mounts: Optional[Sequence[Mapping[str, JSON]]] = None,
        idle_timeout: Optional[float] = None,
        engine: str = "",
        from_snapshot: str = "",
        labels: Optional[Mapping[str, str]] = None,
        ttl: Optional[float] = None,
    ) -> AsyncVM:
        """Creates a VM (fields as CreateVM in docs/api.md; None and "" take the server's defaults)."""
        info = await self._t.do(create_vm(permissions, limits, env, cwd, hostname, clock, mounts, idle_timeout, engine, from_snapshot, labels, ttl))
        return AsyncVM(self._t, info.id)

    def vm(self, vm_id: str) -> AsyncVM:
        """The VM vm_id, without asking the server."""
        return AsyncVM(self._t, vm_id)

    async def list_vms(self, *, labels: Optional[Mapping[str, str]] = None, state: str = "") -> List[VMInfo]:
        """The tenant's VMs; with labels, those with every one of them; with state, those running, paused or lost."""
        return await self._t.do(list_vms(labels, state))

    async def list_snapshots(self) -> List[Snapshot]:
        """The tenant's snapshots, oldest first."""
        return await self._t.do(list_snapshots())

    async def snapshot(self, snapshot_id: str) -> Snapshot:
        """One of the tenant's snapshots."""
        return await self._t.do(get_snapshot(snapshot_id))

    async def delete_snapshot(self, snapshot_id: str) -> None:
        """Deletes one of the tenant's snapshots."""
        await self._t.do(delete_snapshot(snapshot_id))


class AsyncVM:
    """A VM on the server; an async context manager that deletes it at exit."""

    def __init__(self, client: _AsyncTransport, vm_id: str) -> None:
        self._c = client
        self._id = vm_id
        self.fs = AsyncFS(client, vm_id)
        self.js = AsyncJS(client, vm_id)

    @property
    def id(self) -> str:
        """The VM's id."""
        return self._id

    async def __aenter__(self) -> AsyncVM:
        return self

    async def __aexit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            await self.delete()
        except APIError as err:
            if err.code != "not_found":
                raise

    async def info(self) -> VMInfo:
        """The VM's description."""
        return await self._c.do(get_vm(self._id))

    async def delete(self) -> None:
        """Deletes the VM and everything in it."""
        await self._c.do(delete_vm(self._id))

    async def snapshot(self, *, labels: Optional[Mapping[str, str]] = None, restart: Optional[Sequence[Sequence[str]]] = None) -> Snapshot:
        """Saves the VM's files and options on the server; new_vm(from_snapshot=...) restores them."""
        return await self._c.do(create_snapshot(self._id, labels, restart))

    async def fork(self) -> AsyncVM:
        """A new VM whose files start as this one's, copy-on-write: writes on either side stay there."""
        info = await self._c.do(fork_vm(self._id))
        return AsyncVM(self._c, info.id)

    async def preview(self, port: int, ttl: Optional[float] = None) -> Preview:
        """A URL that opens the guest's TCP port with no credentials until it expires (ttl seconds) or is revoked."""
        return await self._c.do(create_preview(self._id, port, ttl))

    async def revoke_preview(self, preview_id: str) -> None:
        """Ends a preview before it expires."""
        await self._c.do(revoke_preview(self._id, preview_id))

    async def pause(self, *, restart: Optional[Sequence[Sequence[str]]] = None) -> VMInfo:
        """Saves and frees the VM; its next request (or resume) restores it. Processes end; restart starts these again."""
        return await self._c.do(pause_vm(self._id, restart))

    async def resume(self) -> VMInfo:
        """Restores a paused VM now."""
        return await self._c.do(resume_vm(self._id))

    async def patch(self, *, ttl: Optional[float] = None, labels: Optional[Mapping[str, str]] = None) -> VMInfo:
        """Sets the VM's TTL from now (seconds; 0 clears it) and/or replaces its labels."""
        return await self._c.do(patch_vm(self._id, ttl, labels))

    async def exec(
        self,
        cmdline: str,
        *,
        stdin: Optional[bytes] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
        on_stdout: Optional[Callable[[bytes], object]] = None,
        on_stderr: Optional[Callable[[bytes], object]] = None,
    ) -> ExecResult:
        """Runs a command line and waits for it: a plain list of words runs directly,
        anything else under sh -c. With on_stdout or on_stderr the output streams to
        them as it is produced (and the result holds none)."""
        body = command(cmdline)
        return await self._exec("/exec", body, stdin, env, cwd, timeout, max_output, on_stdout, on_stderr)

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: Optional[bytes] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
        on_stdout: Optional[Callable[[bytes], object]] = None,
        on_stderr: Optional[Callable[[bytes], object]] = None,
    ) -> ExecResult:
        """Runs argv (never through a shell) and waits for it, as exec."""
        body = command(list(argv))
        return await self._exec("/exec", body, stdin, env, cwd, timeout, max_output, on_stdout, on_stderr)

    async def exec_stream(
        self,
        cmd: Union[str, Sequence[str]],
        *,
        stdin: Optional[bytes] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
    ) -> AsyncIterator[Union[Output, ExecResult]]:
        """Runs a command line (str) or argv and yields its Output as produced, then its ExecResult."""
        call = exec_call(self._id, "/exec", command(cmd), stdin, env, cwd, timeout, max_output, True)
        async for item in self._c.events(call):
            yield item

    async def _exec(
        self,
        sub: str,
        body: Dict[str, JSON],
        stdin: Optional[bytes],
        env: Optional[Mapping[str, str]],
        cwd: str,
        timeout: Optional[float],
        max_output: Optional[int],
        on_stdout: Optional[Callable[[bytes], object]],
        on_stderr: Optional[Callable[[bytes], object]],
    ) -> ExecResult:
        stream = on_stdout is not None or on_stderr is not None
        call = exec_call(self._id, sub, body, stdin, env, cwd, timeout, max_output, stream)
        if not stream:
            return await self._c.do(Op(call, parse_exec))
        result: Optional[ExecResult] = None
        async for item in self._c.events(call):
            if isinstance(item, ExecResult):
                result = item
                continue
            cb = on_stdout if item.stream == "stdout" else on_stderr
            if cb is not None:
                cb(item.data)
        if result is None:
            raise ProtocolError("the exec's event stream ended before its exit")
        return result

    async def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        pty: Optional[PTY] = None,
    ) -> AsyncProcess:
        """Starts argv in the VM and attaches to it over a WebSocket. The server kills
        the process when the session ends (close, or a lost connection)."""
        pid = await self._c.do(spawn(self._id, argv, env, cwd, pty))
        try:
            return await attach(self._c.base, self._c.token, self._id, pid, self._c.policy.timeout)
        except BaseException:
            # Unattached, it would live to the server's lifetime limit.
            try:
                await self._c.do(kill_process(self._id, pid))
            except (APIError, httpx.HTTPError):
                pass  # the first error is the one to raise
            raise


async def attach(base: str, token: str, vm_id: str, pid: int, timeout: Optional[float]) -> AsyncProcess:
    """Opens the WebSocket of process pid."""
    url = ws_url(base, process_path(vm_id, pid) + "/ws")
    try:
        ws = await connect(
            url, extra_headers={"Authorization": "Bearer " + token}, max_size=MAX_FRAME,
            open_timeout=timeout, compression=None,
        )
    except websockets.exceptions.InvalidStatusCode as e:
        raise APIError(e.status_code, code_for_status(e.status_code), f"attaching to process {pid}: {e}") from None
    return AsyncProcess(pid, ws)


class AsyncProcess:
    """A process spawned on the server. Iterate it (async for) for its Output until
    it exits, or await wait(); write, close_stdin, signal and resize may be called
    meanwhile from other tasks. An async context manager that closes it at exit."""

    def __init__(self, pid: int, ws: WebSocketClientProtocol) -> None:
        self._pid = pid
        self._ws = ws
        self._done = False
        #: How it ended, once the exit was read.
        self.exit_status: Optional[ExitStatus] = None

    @property
    def pid(self) -> int:
        """The process id inside the VM."""
        return self._pid

    async def __aenter__(self) -> AsyncProcess:
        return self

    async def __aexit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    def __aiter__(self) -> AsyncProcess:
        return self

    async def __anext__(self) -> Output:
        out = await self.next_output()
        if out is None:
            raise StopAsyncIteration
        return out

    async def next_output(self) -> Optional[Output]:
        """The next chunk of output, or None once the process has exited."""
        if self._done:
            return None
        try:
            msg = await self._ws.recv()
        except websockets.exceptions.ConnectionClosed as e:
            self._done = True
            raise ProtocolError(f"process {self._pid}: the session ended before its exit: {e}") from None
        try:
            frame = parse_frame(self._pid, msg)
        except ProtocolError:
            self._done = True
            await self._ws.close(1003, "want binary frames with a tag byte")
            raise
        if isinstance(frame, ExitStatus):
            self.exit_status = frame
            self._done = True
            await self._ws.close()
            return None
        return frame

    async def wait(self) -> ProcessResult:
        """Waits for the exit; the result holds the output not read before."""
        out: Dict[str, List[bytes]] = {"stdout": [], "stderr": []}
        while (o := await self.next_output()) is not None:
            out[o.stream].append(o.data)
        st = self.exit_status
        if st is None:
            raise ProtocolError(f"process {self._pid}: no exit status")
        return ProcessResult(st.exit_code, st.signal, b"".join(out["stdout"]), b"".join(out["stderr"]))

    async def _send(self, frame: bytes) -> None:
        if self._done:
            raise ProcessDone(f"process {self._pid}: the session has ended")
        try:
            await self._ws.send(frame)
        except websockets.exceptions.ConnectionClosed:
            raise ProcessDone(f"process {self._pid}: the session has ended") from None

    async def write(self, data: bytes) -> None:
        """Sends data to the process's stdin."""
        for frame in stdin_frames(data):
            await self._send(frame)

    async def close_stdin(self) -> None:
        """Sends end of input."""
        await self._send(bytes([TAG_STDIN_EOF]))

    async def signal(self, sig: int) -> None:
        """Sends signal sig (1-64) to the process."""
        await self._send(signal_frame(sig))

    async def resize(self, rows: int, cols: int) -> None:
        """Sets the size of the process's terminal (1-1000 each)."""
        await self._send(resize_frame(rows, cols))

    async def close(self) -> None:
        """Ends the session, killing the process if it still runs."""
        if self._done:
            return
        try:
            await self.signal(9)
        except ProcessDone:
            pass
        self._done = True
        await self._ws.close()


class AsyncFS:
    """The files of a VM. Paths are absolute guest paths."""

    def __init__(self, client: _AsyncTransport, vm_id: str) -> None:
        self._c = client
        self._id = vm_id

    async def read_file(self, name: str) -> bytes:
        """The contents of the regular file name."""
        return await self._c.do(read_file(self._id, name))

    async def write_file(self, name: str, data: bytes) -> None:
        """Writes data to name, creating it and missing parent directories."""
        await self._c.do(write_file(self._id, name, data))

    async def lstat(self, name: str) -> FileInfo:
        """name's attributes, not following a final symlink."""
        return await self._c.do(lstat(self._id, name))

    async def read_dir(self, name: str) -> List[FileInfo]:
        """The entries of the directory name."""
        return await self._c.do(read_dir(self._id, name))

    async def mkdir_all(self, name: str) -> None:
        """Creates the directory name and its missing parents."""
        await self._c.do(mkdir_all(self._id, name))

    async def remove(self, name: str) -> None:
        """Removes the file or empty directory name."""
        await self._c.do(remove(self._id, name, False))

    async def remove_all(self, name: str) -> None:
        """Removes name and everything beneath it; name must exist."""
        await self._c.do(remove(self._id, name, True))

    async def read_archive(self, directory: str) -> bytes:
        """A tar of the directory (names relative to it)."""
        return await self._c.do(read_archive(self._id, directory))

    async def write_archive(self, directory: str, tar: bytes) -> None:
        """Unpacks a tar into the directory, creating it; names that would leave it are refused."""
        await self._c.do(write_archive(self._id, directory, tar))

    async def upload(self, directory: str, files: Mapping[str, bytes]) -> None:
        """Writes files (relative name -> bytes) under directory, as one tar."""
        await self.write_archive(directory, tar_of(files))

    async def download(self, directory: str) -> Dict[str, bytes]:
        """The regular files under directory (relative name -> bytes)."""
        return files_of(await self.read_archive(directory))


class AsyncJS:
    """JavaScript in a VM."""

    def __init__(self, client: _AsyncTransport, vm_id: str) -> None:
        self._c = client
        self._id = vm_id

    async def execute(
        self,
        src: str,
        *,
        stdin: Optional[bytes] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
    ) -> ExecResult:
        """Runs a CommonJS script as node would; its result as an exec's."""
        call = exec_call(self._id, "/js/execute", {"code": src}, stdin, env, cwd, timeout, max_output, False)
        return await self._c.do(Op(call, parse_exec))

    async def evaluate(
        self,
        expr: str,
        *,
        stdin: Optional[bytes] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        timeout: Optional[float] = None,
    ) -> JSON:
        """Evaluates an expression (awaited if a promise); its JSON value. A throw is
        an APIError with code "eval_error" whose message is the guest's stack."""
        call = exec_call(self._id, "/js/evaluate", {"code": expr}, stdin, env, cwd, timeout, None, False)
        return await self._c.do(Op(call, parse_value))

    async def new_context(self, *, timeout: Optional[float] = None) -> AsyncJSContext:
        """A persistent context (globals kept between evaluations); timeout bounds each evaluation."""
        return AsyncJSContext(self._c, self._id, await self._c.do(new_context(self._id, timeout)))


class AsyncJSContext:
    """A persistent JavaScript context; an async context manager that closes it at exit."""

    def __init__(self, client: _AsyncTransport, vm_id: str, cid: str) -> None:
        self._c = client
        self._vm = vm_id
        self._id = cid

    @property
    def id(self) -> str:
        """The context's id."""
        return self._id

    async def __aenter__(self) -> AsyncJSContext:
        return self

    async def __aexit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    async def evaluate(self, code: str) -> JSON:
        """Evaluates code in the context; its JSON value."""
        return await self._c.do(context_evaluate(self._vm, self._id, code))

    async def close(self) -> None:
        """Ends the context."""
        await self._c.do(delete_context(self._vm, self._id))
