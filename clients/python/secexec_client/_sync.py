"""The synchronous client: Client, VM and what hangs off them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import threading
import time
from types import TracebackType
from typing import Any, Callable, Coroutine, Dict, Iterator, List, Mapping, Optional, Sequence, Type, TypeVar, Union, cast

import httpx

from ._async import AsyncProcess, attach, check_url, new_limits, timeout_of
from ._core import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    JSON,
    MAX_ANSWER,
    MAX_ERROR_BODY,
    MAX_EVENT,
    PTY,
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
    ProcessResult,
    ProtocolError,
    RetryPolicy,
    Snapshot,
    VMInfo,
    api_error,
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
    parse_value,
    patch_vm,
    pause_vm,
    read_archive,
    read_dir,
    read_file,
    remove,
    resume_vm,
    revoke_preview,
    spawn,
    tar_of,
    write_archive,
    write_file,
)
from ._sse import SSEDecoder

T = TypeVar("T")


NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


def nodelay_transport() -> httpx.HTTPTransport:
    """An httpx transport for a Client's own httpx.Client (http_client=): its
    sockets send small writes at once (TCP_NODELAY). httpx writes a request's
    headers and body apart; under Nagle's algorithm the body then waits for
    the server's delayed ACK, some 40 ms a call. (asyncio sets TCP_NODELAY
    itself: AsyncClient needs none of this.)"""
    limits = new_limits()
    try:  # httpx >= 0.24
        made: httpx.HTTPTransport = cast(Any, httpx.HTTPTransport)(limits=limits, socket_options=NODELAY)
        return made
    except TypeError:
        pass
    t = httpx.HTTPTransport(limits=limits)
    # Older httpx takes no socket options: wrap its pool's network backend.
    pool = getattr(t, "_pool", None)
    if pool is not None and hasattr(pool, "_network_backend"):
        setattr(pool, "_network_backend", _NoDelayBackend(getattr(pool, "_network_backend")))
    return t


class _NoDelayBackend:
    """httpcore's network backend, with TCP_NODELAY on the sockets it connects."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
        stream = self._inner.connect_tcp(*args, **kwargs)
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            sock.setsockopt(*NODELAY[0])
        return stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Transport:
    """Sends the calls of one Client and of everything hanging off it."""

    def __init__(self, base: str, token: str, policy: RetryPolicy, http: httpx.Client) -> None:
        self.base = base
        self.token = token
        self.policy = policy
        self.http = http
        self._loop: Optional[_Loop] = None
        self._lock = threading.Lock()

    def loop(self) -> _Loop:
        """The thread running the WebSocket sessions of processes, started on first use."""
        with self._lock:
            if self._loop is None:
                self._loop = _Loop()
            return self._loop

    def close(self) -> None:
        self.http.close()
        with self._lock:
            if self._loop is not None:
                self._loop.close()
                self._loop = None

    def open(self, call: Call) -> httpx.Response:
        """Sends call and returns its 2xx answer unread (close it); any other answer raises APIError."""
        deadline = self.policy.deadline(call)
        attempt = 0
        while True:
            req = self.http.build_request(
                call.method, self.base + call.path, params=call.params, content=call.content,
                headers=call.header_map(self.token), timeout=timeout_of(call, self.policy.timeout),
            )
            resp = self.http.send(req, stream=True)
            if resp.is_success:
                return resp
            body = Collector(MAX_ERROR_BODY)
            try:
                for chunk in resp.iter_bytes():
                    if not body.add(chunk):
                        break
            finally:
                resp.close()
            err = api_error(resp.status_code, resp.headers.get("Retry-After"), bytes(body.buf))
            wait = self.policy.wait(err, attempt, deadline)
            if wait is None:
                raise err
            time.sleep(wait)
            attempt += 1

    def do(self, op: Op[T]) -> T:
        resp = self.open(op.call)
        body = Collector(MAX_ANSWER)
        try:
            for chunk in resp.iter_bytes():
                if not body.add(chunk):
                    raise ProtocolError(f"{op.call.method} {op.call.path}: an answer over {MAX_ANSWER} bytes")
            return op.parse(bytes(body.buf))
        finally:
            resp.close()

    def events(self, call: Call) -> Iterator[Union[Output, ExecResult]]:
        resp = self.open(call)
        try:
            dec, st = SSEDecoder(MAX_EVENT), ExecEvents()
            # Read to the end after the exit (the server ends the stream
            # there) so that the connection is reused.
            for chunk in resp.iter_bytes():
                for ev in dec.feed(chunk):
                    item = st.handle(ev)
                    if item is not None:
                        yield item
            st.finish()
        finally:
            resp.close()


class Client:
    """A synchronous client of one secexec server, acting for the tenant of token.

    One pool of connections serves every call; share one client (it is safe
    to use from several threads). Requests refused for the moment (429, 503
    other than engine_lost) are retried up to max_retries times (negative:
    never), waiting as Retry-After asks (at most max_retry_wait seconds).
    timeout bounds each call that is not an exec, an evaluation or a file
    transfer (None: unbounded); those end with their own timeout."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        policy = RetryPolicy(max_retries, max_retry_wait, timeout)
        http = http_client if http_client is not None else httpx.Client(transport=nodelay_transport())
        self._t = _Transport(check_url(base_url), token, policy, http)

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self._t.base

    def close(self) -> None:
        """Closes the client's connections (and ends its processes' sessions)."""
        self._t.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def healthy(self) -> bool:
        """Whether the server answers its health check."""
        try:
            self._t.do(healthz())
        except (APIError, httpx.HTTPError):
            return False
        return True

    def new_vm(
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
    ) -> VM:
        """Creates a VM (fields as CreateVM in docs/api.md; None and "" take the server's defaults)."""
        info = self._t.do(create_vm(permissions, limits, env, cwd, hostname, clock, mounts, idle_timeout, engine, from_snapshot, labels, ttl))
        return VM(self._t, info.id)

    def vm(self, vm_id: str) -> VM:
        """The VM vm_id, without asking the server."""
        return VM(self._t, vm_id)

    def list_vms(self, *, labels: Optional[Mapping[str, str]] = None, state: str = "") -> List[VMInfo]:
        """The tenant's VMs; with labels, those with every one of them; with state, those running, paused or lost."""
        return self._t.do(list_vms(labels, state))

    def list_snapshots(self) -> List[Snapshot]:
        """The tenant's snapshots, oldest first."""
        return self._t.do(list_snapshots())

    def snapshot(self, snapshot_id: str) -> Snapshot:
        """One of the tenant's snapshots."""
        return self._t.do(get_snapshot(snapshot_id))

    def delete_snapshot(self, snapshot_id: str) -> None:
        """Deletes one of the tenant's snapshots."""
        self._t.do(delete_snapshot(snapshot_id))


class VM:
    """A VM on the server; a context manager that deletes it at exit."""

    def __init__(self, client: _Transport, vm_id: str) -> None:
        self._c = client
        self._id = vm_id
        self.fs = FS(client, vm_id)
        self.js = JS(client, vm_id)

    @property
    def id(self) -> str:
        """The VM's id."""
        return self._id

    def __enter__(self) -> VM:
        return self

    def __exit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            self.delete()
        except APIError as err:
            if err.code != "not_found":
                raise

    def info(self) -> VMInfo:
        """The VM's description."""
        return self._c.do(get_vm(self._id))

    def delete(self) -> None:
        """Deletes the VM and everything in it."""
        self._c.do(delete_vm(self._id))

    def snapshot(self, *, labels: Optional[Mapping[str, str]] = None, restart: Optional[Sequence[Sequence[str]]] = None) -> Snapshot:
        """Saves the VM's files and options on the server; new_vm(from_snapshot=...) restores them."""
        return self._c.do(create_snapshot(self._id, labels, restart))

    def fork(self) -> VM:
        """A new VM whose files start as this one's, copy-on-write: writes on either side stay there."""
        info = self._c.do(fork_vm(self._id))
        return VM(self._c, info.id)

    def preview(self, port: int, ttl: Optional[float] = None) -> Preview:
        """A URL that opens the guest's TCP port with no credentials until it expires (ttl seconds) or is revoked."""
        return self._c.do(create_preview(self._id, port, ttl))

    def revoke_preview(self, preview_id: str) -> None:
        """Ends a preview before it expires."""
        self._c.do(revoke_preview(self._id, preview_id))

    def pause(self, *, restart: Optional[Sequence[Sequence[str]]] = None) -> VMInfo:
        """Saves and frees the VM; its next request (or resume) restores it. Processes end; restart starts these again."""
        return self._c.do(pause_vm(self._id, restart))

    def resume(self) -> VMInfo:
        """Restores a paused VM now."""
        return self._c.do(resume_vm(self._id))

    def patch(self, *, ttl: Optional[float] = None, labels: Optional[Mapping[str, str]] = None) -> VMInfo:
        """Sets the VM's TTL from now (seconds; 0 clears it) and/or replaces its labels."""
        return self._c.do(patch_vm(self._id, ttl, labels))

    def exec(
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
        return self._exec("/exec", body, stdin, env, cwd, timeout, max_output, on_stdout, on_stderr)

    def run(
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
        return self._exec("/exec", body, stdin, env, cwd, timeout, max_output, on_stdout, on_stderr)

    def exec_stream(
        self,
        cmd: Union[str, Sequence[str]],
        *,
        stdin: Optional[bytes] = None,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        timeout: Optional[float] = None,
        max_output: Optional[int] = None,
    ) -> Iterator[Union[Output, ExecResult]]:
        """Runs a command line (str) or argv and yields its Output as produced, then its ExecResult."""
        call = exec_call(self._id, "/exec", command(cmd), stdin, env, cwd, timeout, max_output, True)
        for item in self._c.events(call):
            yield item

    def _exec(
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
            return self._c.do(Op(call, parse_exec))
        result: Optional[ExecResult] = None
        for item in self._c.events(call):
            if isinstance(item, ExecResult):
                result = item
                continue
            cb = on_stdout if item.stream == "stdout" else on_stderr
            if cb is not None:
                cb(item.data)
        if result is None:
            raise ProtocolError("the exec's event stream ended before its exit")
        return result

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: str = "",
        pty: Optional[PTY] = None,
    ) -> Process:
        """Starts argv in the VM and attaches to it over a WebSocket. The server kills
        the process when the session ends (close, or a lost connection)."""
        pid = self._c.do(spawn(self._id, argv, env, cwd, pty))
        loop = self._c.loop()
        try:
            return Process(loop, loop.run(attach(self._c.base, self._c.token, self._id, pid, self._c.policy.timeout)))
        except BaseException:
            # Unattached, it would live to the server's lifetime limit.
            try:
                self._c.do(kill_process(self._id, pid))
            except (APIError, httpx.HTTPError):
                pass  # the first error is the one to raise
            raise


class _Loop:
    """An event loop in a thread of its own: the WebSocket library is asyncio's,
    so a synchronous Process runs its session there."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="secexec-client", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: Optional[float] = None) -> T:
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError(f"no answer within {timeout} s") from None

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class Process:
    """A process spawned on the server. Iterate it for its Output until it exits, or
    call wait(); write, close_stdin, signal and resize may be called meanwhile from
    other threads. A context manager that closes it at exit."""

    def __init__(self, loop: _Loop, proc: AsyncProcess) -> None:
        self._loop = loop
        self._p = proc

    @property
    def pid(self) -> int:
        """The process id inside the VM."""
        return self._p.pid

    @property
    def exit_status(self) -> Optional[ExitStatus]:
        """How it ended, once the exit was read."""
        return self._p.exit_status

    def __enter__(self) -> Process:
        return self

    def __exit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def __iter__(self) -> Iterator[Output]:
        while (out := self.next_output()) is not None:
            yield out

    def next_output(self, timeout: Optional[float] = None) -> Optional[Output]:
        """The next chunk of output, or None once the process has exited;
        TimeoutError if none came within timeout seconds."""
        return self._loop.run(self._p.next_output(), timeout)

    def wait(self, timeout: Optional[float] = None) -> ProcessResult:
        """Waits for the exit (TimeoutError after timeout seconds); the result holds
        the output not read before."""
        return self._loop.run(self._p.wait(), timeout)

    def write(self, data: bytes) -> None:
        """Sends data to the process's stdin."""
        self._loop.run(self._p.write(data))

    def close_stdin(self) -> None:
        """Sends end of input."""
        self._loop.run(self._p.close_stdin())

    def signal(self, sig: int) -> None:
        """Sends signal sig (1-64) to the process."""
        self._loop.run(self._p.signal(sig))

    def resize(self, rows: int, cols: int) -> None:
        """Sets the size of the process's terminal (1-1000 each)."""
        self._loop.run(self._p.resize(rows, cols))

    def close(self) -> None:
        """Ends the session, killing the process if it still runs."""
        self._loop.run(self._p.close())


class FS:
    """The files of a VM. Paths are absolute guest paths."""

    def __init__(self, client: _Transport, vm_id: str) -> None:
        self._c = client
        self._id = vm_id

    def read_file(self, name: str) -> bytes:
        """The contents of the regular file name."""
        return self._c.do(read_file(self._id, name))

    def write_file(self, name: str, data: bytes) -> None:
        """Writes data to name, creating it and missing parent directories."""
        self._c.do(write_file(self._id, name, data))

    def lstat(self, name: str) -> FileInfo:
        """name's attributes, not following a final symlink."""
        return self._c.do(lstat(self._id, name))

    def read_dir(self, name: str) -> List[FileInfo]:
        """The entries of the directory name."""
        return self._c.do(read_dir(self._id, name))

    def mkdir_all(self, name: str) -> None:
        """Creates the directory name and its missing parents."""
        self._c.do(mkdir_all(self._id, name))

    def remove(self, name: str) -> None:
        """Removes the file or empty directory name."""
        self._c.do(remove(self._id, name, False))

    def remove_all(self, name: str) -> None:
        """Removes name and everything beneath it; name must exist."""
        self._c.do(remove(self._id, name, True))

    def read_archive(self, directory: str) -> bytes:
        """A tar of the directory (names relative to it)."""
        return self._c.do(read_archive(self._id, directory))

    def write_archive(self, directory: str, tar: bytes) -> None:
        """Unpacks a tar into the directory, creating it; names that would leave it are refused."""
        self._c.do(write_archive(self._id, directory, tar))

    def upload(self, directory: str, files: Mapping[str, bytes]) -> None:
        """Writes files (relative name -> bytes) under directory, as one tar."""
        self.write_archive(directory, tar_of(files))

    def download(self, directory: str) -> Dict[str, bytes]:
        """The regular files under directory (relative name -> bytes)."""
        return files_of(self.read_archive(directory))


class JS:
    """JavaScript in a VM."""

    def __init__(self, client: _Transport, vm_id: str) -> None:
        self._c = client
        self._id = vm_id

    def execute(
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
        return self._c.do(Op(call, parse_exec))

    def evaluate(
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
        return self._c.do(Op(call, parse_value))

    def new_context(self, *, timeout: Optional[float] = None) -> JSContext:
        """A persistent context (globals kept between evaluations); timeout bounds each evaluation."""
        return JSContext(self._c, self._id, self._c.do(new_context(self._id, timeout)))


class JSContext:
    """A persistent JavaScript context; a context manager that closes it at exit."""

    def __init__(self, client: _Transport, vm_id: str, cid: str) -> None:
        self._c = client
        self._vm = vm_id
        self._id = cid

    @property
    def id(self) -> str:
        """The context's id."""
        return self._id

    def __enter__(self) -> JSContext:
        return self

    def __exit__(self, t: Optional[Type[BaseException]], e: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.close()

    def evaluate(self, code: str) -> JSON:
        """Evaluates code in the context; its JSON value."""
        return self._c.do(context_evaluate(self._vm, self._id, code))

    def close(self) -> None:
        """Ends the context."""
        self._c.do(delete_context(self._vm, self._id))
