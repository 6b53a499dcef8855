"""Tests of the installed secexec_client package against a real `secexec serve`.

The server's URL and the tokens of two tenants come from the environment
(SECEXEC_URL, SECEXEC_TOKEN, SECEXEC_TOKEN_2). clients/clients_test.go starts
the server, builds the wheel, installs it into a venv and runs:
python -m unittest -v test_sse test_client
"""

import asyncio
import http.server
import importlib.metadata
import os
import pathlib
import re
import socket
import threading
import unittest
from typing import Dict, List, Set, Tuple

import httpx

import secexec_client
from secexec_client import PTY, APIError, AsyncClient, Client, ExecResult, Limits, Output, ProcessDone, nodelay_transport

URL = os.environ["SECEXEC_URL"]
TOKEN = os.environ["SECEXEC_TOKEN"]
TOKEN_2 = os.environ["SECEXEC_TOKEN_2"]

# Every request the suites make, templated, to check against ROUTES.
SEEN: Set[str] = set()
TEMPLATES = [
    (re.compile(r"/files/.*$"), "/files/{path}"),
    (re.compile(r"/contexts/[^/]+"), "/contexts/{cid}"),
    (re.compile(r"/processes/\d+"), "/processes/{pid}"),
    (re.compile(r"/previews/[^/]+$"), "/previews/{pid}"),
    (re.compile(r"^/v1/snapshots/[^/]+$"), "/v1/snapshots/{sid}"),
    (re.compile(r"^/v1/vms/[^/]+"), "/v1/vms/{id}"),
]


def record(req: httpx.Request) -> None:
    path = req.url.path
    for pat, repl in TEMPLATES:
        path = pat.sub(repl, path, count=1)
    SEEN.add(f"{req.method} {path}")


async def arecord(req: httpx.Request) -> None:
    record(req)


class PackageTest(unittest.TestCase):
    def test_installed(self):
        # Imported from the installed wheel, typed, versioned.
        where = pathlib.Path(secexec_client.__file__).parent
        self.assertIn("site-packages", str(where))
        self.assertTrue((where / "py.typed").is_file())
        self.assertEqual(importlib.metadata.version("secexec-client"), secexec_client.__version__)

    def test_bad_url(self):
        for bad in ["ftp://x", "http://", "127.0.0.1:8080", "http://h/?q=1"]:
            with self.assertRaises(ValueError, msg=bad):
                Client(bad, TOKEN)


class ClientTest(unittest.TestCase):
    """The synchronous client."""

    @classmethod
    def setUpClass(cls):
        cls.c = Client(URL, TOKEN, http_client=httpx.Client(transport=nodelay_transport(), event_hooks={"request": [record]}))
        cls.other = Client(URL, TOKEN_2)
        cls.vm = cls.c.new_vm(env={"GREETING": "hello"})

    @classmethod
    def tearDownClass(cls):
        cls.vm.delete()
        cls.c.close()
        cls.other.close()

    def test_vms(self):
        self.assertTrue(self.c.healthy())
        info = self.vm.info()
        self.assertEqual((info.id, info.state), (self.vm.id, "running"))
        self.assertIn(self.vm.id, [v.id for v in self.c.list_vms()])
        with self.c.new_vm() as vm:
            self.assertEqual(vm.exec("echo $GREETING").stdout, b"\n")
        with self.assertRaises(APIError) as cm:
            vm.info()
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))

    def test_snapshots_fork_previews_pause(self):
        with self.c.new_vm(labels={"suite": "py"}, ttl=600) as vm:
            self.assertEqual(vm.info().labels, {"suite": "py"})
            self.assertTrue(vm.info().expires_at)
            vm.fs.write_file("/workspace/a.txt", b"one")
            snap = vm.snapshot(labels={"step": "1"})
            self.assertEqual(snap.labels, {"step": "1"})
            self.assertIn(snap.id, [x.id for x in self.c.list_snapshots()])
            self.assertEqual(self.c.snapshot(snap.id).id, snap.id)
            with self.assertRaises(APIError) as cm:
                self.other.snapshot(snap.id)
            self.assertEqual(cm.exception.status, 404)
            vm.fs.write_file("/workspace/a.txt", b"two")
            with self.c.new_vm(from_snapshot=snap.id) as restored:
                self.assertEqual(restored.fs.read_file("/workspace/a.txt"), b"one")
            with vm.fork() as child:
                child.fs.write_file("/workspace/a.txt", b"child")
                self.assertEqual(vm.fs.read_file("/workspace/a.txt"), b"two")
            self.c.delete_snapshot(snap.id)
            with self.assertRaises(APIError) as cm:
                self.c.snapshot(snap.id)
            self.assertEqual(cm.exception.status, 404)

            # A preview opens the guest's port with no token, until revoked.
            with self.assertRaises(APIError) as cm:
                vm.preview(3000)
            self.assertEqual(cm.exception.status, 404)
            srv = "require('http').createServer((q, r) => r.end('hi ' + q.url)).listen(3000, () => console.log('ready'))"
            with vm.spawn(["node", "-e", srv]) as proc:
                for out in proc:
                    if b"ready" in out.data:
                        break
                pv = vm.preview(3000, ttl=60)
                self.assertEqual(pv.port, 3000)
                self.assertEqual(httpx.get(pv.url + "x").text, "hi /x")
                vm.revoke_preview(pv.id)
                self.assertEqual(httpx.get(pv.url + "x").status_code, 404)

            # Labels filter the list; a pause frees the VM, its next request restores it.
            self.assertEqual([v.id for v in self.c.list_vms(labels={"suite": "py"})], [vm.id])
            self.assertEqual(vm.patch(labels={"suite": "py", "more": "yes"}).labels["more"], "yes")
            self.assertEqual(vm.pause().state, "paused")
            self.assertIn(vm.id, [v.id for v in self.c.list_vms(state="paused")])
            self.assertEqual(vm.fs.read_file("/workspace/a.txt"), b"two")
            self.assertEqual(vm.info().state, "running")
            self.assertEqual(vm.pause().state, "paused")
            self.assertEqual(vm.resume().state, "running")

    def test_vm_options(self):
        with self.c.new_vm(limits=Limits(fs_bytes=1 << 20), idle_timeout=90, cwd="/tmp", hostname="pyhost") as vm:
            self.assertEqual(vm.info().idle_timeout, 90)
            self.assertEqual(vm.exec("pwd; cat /etc/hostname").stdout, b"/tmp\npyhost\n")
            with self.assertRaises(APIError) as cm:
                vm.fs.write_file("/tmp/big", b"x" * (2 << 20))
            self.assertEqual(cm.exception.code, "no_space")
        policy = {
            "fs": [{"effect": "allow", "paths": ["/**"]}, {"effect": "deny", "ops": ["write"], "paths": ["/tmp/**"]}],
            "exec": [{"effect": "allow", "commands": ["*"]}],
        }
        with self.c.new_vm(permissions=policy) as vm:
            self.assertEqual(vm.exec("echo ok > /workspace/f; cat /workspace/f").stdout, b"ok\n")
            res = vm.exec("echo no > /tmp/f")
            self.assertEqual((res.exit_code, res.stderr), (1, b"sh: line 1: /tmp/f: Permission denied\n"))
        with self.assertRaises(APIError) as cm:
            self.c.new_vm(permissions={"fs": "everything"})
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "bad_permissions"))

    def test_exec(self):
        data = bytes(range(256))
        res = self.vm.run(["cat"], stdin=data)
        self.assertEqual((res.exit_code, res.outcome, res.stdout), (0, "succeeded", data))
        res = self.vm.exec('echo "$GREETING $X" >&2; exit 7', env={"X": "there"})
        self.assertEqual((res.exit_code, res.outcome, res.stderr), (7, "failed", b"hello there\n"))
        res = self.vm.exec("sleep 10", timeout=0.3)
        self.assertEqual((res.exit_code, res.outcome, res.reason), (124, "timed_out", "timeout"))
        self.assertEqual(self.vm.exec("pwd", cwd="/tmp").stdout, b"/tmp\n")
        with self.assertRaises(ValueError):
            self.vm.exec("  ")
        with self.assertRaises(ValueError):
            self.vm.run([])

    def test_exec_streamed(self):
        out: List[bytes] = []
        err: List[bytes] = []
        res = self.vm.exec("echo a; echo b >&2; printf '\\r\\n\\r'; exit 3", on_stdout=out.append, on_stderr=err.append)
        self.assertEqual((b"".join(out), b"".join(err), res.exit_code, res.stdout), (b"a\n\r\n\r", b"b\n", 3, b""))
        items = list(self.vm.exec_stream(["sh", "-c", "echo x; echo y >&2"]))
        self.assertIsInstance(items[-1], ExecResult)
        outs = [i for i in items if isinstance(i, Output)]
        self.assertEqual(b"".join(o.data for o in outs if o.stream == "stdout"), b"x\n")
        self.assertEqual(b"".join(o.data for o in outs if o.stream == "stderr"), b"y\n")
        # A program writing far past the limit ends with an exit (truncated).
        res = self.vm.exec("yes | head -c 300000", max_output=1000, on_stdout=out.append)
        self.assertTrue(res.truncated)

    def test_process(self):
        with self.vm.spawn(["sh", "-c", "cat; echo done >&2; exit 7"]) as p:
            self.assertGreater(p.pid, 0)
            big = bytes([0xFF, 0, ord("a")]) * 40000  # several frames
            p.write(big)
            p.close_stdin()
            res = p.wait(timeout=60)
            self.assertEqual((res.exit_code, res.stdout, res.stderr), (7, big, b"done\n"))
        p = self.vm.spawn(["sleep", "60"])
        p.signal(15)
        res = p.wait(timeout=60)
        self.assertEqual((res.exit_code, res.signal), (143, "SIGTERM"))
        with self.assertRaises(ProcessDone):
            p.signal(9)
        with self.assertRaises(ValueError):
            self.vm.spawn([])

    def test_pty(self):
        p = self.vm.spawn(["sh", "-c", "stty size; read x; stty size"], pty=PTY(rows=30, cols=100))
        screen = b""
        for o in p:
            screen += o.data
            if b"30 100" in screen:
                break
        p.resize(40, 120)
        p.write(b"\r")
        res = p.wait(timeout=60)
        self.assertEqual(res.exit_code, 0)
        self.assertIn(b"40 120", res.stdout)
        with self.assertRaises(ValueError):
            p.resize(0, 5)

    def test_close_kills(self):
        p = self.vm.spawn(["sleep", "60"])
        p.close()
        with self.assertRaises(secexec_client.ProtocolError):
            p.wait(timeout=60)

    def test_files(self):
        fs = self.vm.fs
        name = "/workspace/py dir/a%b.bin"
        fs.write_file(name, b"\x00\xff")
        self.assertEqual(fs.read_file(name), b"\x00\xff")
        st = fs.lstat(name)
        self.assertEqual((st.size, st.type, st.is_dir), (2, "file", False))
        self.assertEqual([e.name for e in fs.read_dir("/workspace/py dir")], ["a%b.bin"])
        fs.mkdir_all("/workspace/m/n")
        self.assertTrue(fs.lstat("/workspace/m/n").is_dir)
        fs.remove("/workspace/m/n")
        fs.upload("/workspace/up", {"x.txt": b"x", "d/y.txt": b"y"})
        self.assertEqual(fs.download("/workspace/up"), {"x.txt": b"x", "d/y.txt": b"y"})
        self.assertEqual(self.vm.exec("cat /workspace/up/d/y.txt").stdout, b"y")
        fs.remove_all("/workspace/up")
        with self.assertRaises(APIError) as cm:
            fs.read_file("/workspace/up/x.txt")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
        with self.assertRaises(ValueError):
            fs.read_file("relative")

    def test_js(self):
        self.assertEqual(self.vm.js.evaluate("[1+1, 'é']"), [2, "é"])
        with self.assertRaises(APIError) as cm:
            self.vm.js.evaluate("null.x")
        self.assertEqual(cm.exception.code, "eval_error")
        res = self.vm.js.execute("console.log(require('os').platform()); process.exit(2)")
        self.assertEqual((res.exit_code, res.stdout), (2, b"linux\n"))
        with self.vm.js.new_context() as ctx:
            ctx.evaluate("globalThis.n = 41")
            self.assertEqual(ctx.evaluate("++n"), 42)
        with self.assertRaises(APIError) as cm:
            ctx.evaluate("n")
        self.assertEqual(cm.exception.status, 404)

    def test_tenancy(self):
        self.assertNotIn(self.vm.id, [v.id for v in self.other.list_vms()])
        with self.assertRaises(APIError) as cm:
            self.other.vm(self.vm.id).exec("true")
        self.assertEqual(cm.exception.status, 404)
        with Client(URL, "not-a-token") as bad:
            with self.assertRaises(APIError) as cm:
                bad.list_vms()
            self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
            with self.assertRaises(APIError) as cm:
                bad.vm(self.vm.id).spawn(["true"])
            self.assertEqual(cm.exception.status, 401)

    def test_connection_reuse(self):
        addrs: Set[Tuple[str, int]] = set()
        nodelay: Set[int] = set()

        def hook(resp: httpx.Response) -> None:
            stream = resp.extensions["network_stream"]
            addrs.add(stream.get_extra_info("client_addr"))
            nodelay.add(stream.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        with Client(URL, TOKEN, http_client=httpx.Client(transport=nodelay_transport(), event_hooks={"response": [hook]})) as c:
            vm = c.vm(self.vm.id)
            for _ in range(5):
                vm.exec("true")
                vm.exec("echo x", on_stdout=lambda b: None)
                vm.fs.write_file("/tmp/f", b"x")
                vm.fs.read_file("/tmp/f")
                with self.assertRaises(APIError):
                    vm.fs.lstat("/nope")
                c.list_vms()
        self.assertEqual(len(addrs), 1, addrs)
        # Small writes go at once: no request waits for a delayed ACK.
        self.assertEqual(nodelay, {1})


class RetryTimeoutTest(unittest.TestCase):
    """Retries of 429 honouring Retry-After, and timeouts (tenant 2)."""

    def test_retry_over_quota(self):
        statuses: List[int] = []
        saw429 = threading.Event()

        def hook(resp: httpx.Response) -> None:
            statuses.append(resp.status_code)
            if resp.status_code == 429:
                saw429.set()

        c = Client(URL, TOKEN_2, max_retries=1000, max_retry_wait=0.02, http_client=httpx.Client(event_hooks={"response": [hook]}))
        vm = c.new_vm()
        # Attached processes hold the tenant's slots (8 by default).
        holders = []
        try:
            while True:
                try:
                    holders.append(vm.spawn(["cat"]))
                except APIError as e:
                    self.assertEqual(e.status, 429)
                    break
                self.assertLess(len(holders), 64)
        finally:
            statuses.clear()
            saw429.clear()
        with Client(URL, TOKEN_2, max_retries=-1) as no_retry:
            with self.assertRaises(APIError) as cm:
                no_retry.vm(vm.id).exec("true")
            self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.retry_after), (429, "quota_exceeded", 1.0))
        got: Dict[str, object] = {}
        t = threading.Thread(target=lambda: got.update(res=vm.exec("echo through")))
        t.start()
        self.assertTrue(saw429.wait(60))
        holders.pop().close()
        t.join(60)
        res = got["res"]
        assert isinstance(res, ExecResult)
        self.assertEqual(res.stdout, b"through\n")
        self.assertIn(429, statuses)
        for h in holders:
            h.close()
        vm.delete()
        c.close()

    def test_timeout(self):
        ln = socket.socket()
        ln.bind(("127.0.0.1", 0))
        ln.listen(8)  # accepts (in the kernel) and never answers
        try:
            with Client(f"http://127.0.0.1:{ln.getsockname()[1]}", TOKEN, timeout=0.2) as silent:
                with self.assertRaises(httpx.TimeoutException):
                    silent.list_vms()
        finally:
            ln.close()
        # An exec longer than the client's timeout is bounded by its own.
        with Client(URL, TOKEN_2) as c, c.new_vm() as vm, Client(URL, TOKEN_2, timeout=0.2) as short:
            self.assertEqual(short.vm(vm.id).exec("sleep 1; echo slept").stdout, b"slept\n")


class Hostile(http.server.BaseHTTPRequestHandler):
    """A server that is not secexec: what a client must survive (the real
    server cannot be made to answer like this)."""

    protocol_version = "HTTP/1.1"
    hits: List[str] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def answer(self, status: int, body: bytes, headers: Dict[str, str]) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        Hostile.hits.append(self.path)
        if self.path == "/v1/vms":  # draining: 503, retry after 0 s
            self.answer(503, b'{"error":{"code":"shutting_down","message":"draining"}}', {"Retry-After": "0"})
        elif self.path.startswith("/v1/vms/lost"):
            self.answer(503, b'{"error":{"code":"engine_lost","message":"gone"}}', {})
        else:  # a proxy's page, then a huge one
            self.answer(502, b"<html>bad gateway</html>" + b"x" * 200000, {})

    def do_POST(self) -> None:
        Hostile.hits.append(self.path)
        self.rfile.read(int(self.headers["Content-Length"]))
        # An event line that never ends.
        self.answer(200, b"event: stdout\ndata: " + b"A" * (2 << 20), {"Content-Type": "text/event-stream"})


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the client hanging up on an endless answer is the point


class HostileServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = QuietServer(("127.0.0.1", 0), Hostile)
        threading.Thread(target=cls.srv.serve_forever, daemon=True).start()
        cls.url = f"http://127.0.0.1:{cls.srv.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        cls.srv.shutdown()
        cls.srv.server_close()

    def test_retries_bounded(self):
        Hostile.hits.clear()
        with Client(self.url, TOKEN, max_retries=2) as c:
            with self.assertRaises(APIError) as cm:
                c.list_vms()
            self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.retry_after), (503, "shutting_down", 0.0))
            self.assertEqual(len(Hostile.hits), 3)  # 1 + 2 retries
            Hostile.hits.clear()
            with self.assertRaises(APIError) as cm:
                c.vm("lost").info()
            self.assertEqual((cm.exception.code, len(Hostile.hits)), ("engine_lost", 1))  # never retried

    def test_not_the_api(self):
        with Client(self.url, TOKEN) as c:
            with self.assertRaises(APIError) as cm:
                c.vm("x").fs.read_file("/a")
            self.assertEqual((cm.exception.status, cm.exception.code), (502, "internal"))
            self.assertLessEqual(len(cm.exception.message), 70000)  # bounded
            with self.assertRaises(secexec_client.SSEError):
                list(c.vm("x").exec_stream("true"))

    def test_async_too(self):
        async def main() -> None:
            async with AsyncClient(self.url, TOKEN, max_retries=1) as c:
                Hostile.hits.clear()
                with self.assertRaises(APIError):
                    await c.list_vms()
                self.assertEqual(len(Hostile.hits), 2)
                with self.assertRaises(secexec_client.SSEError):
                    await c.vm("x").exec("true", on_stdout=lambda b: None)

        asyncio.run(main())


class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    """The asyncio client: the same shape, awaited."""

    async def asyncSetUp(self):
        self.c = AsyncClient(URL, TOKEN, http_client=httpx.AsyncClient(event_hooks={"request": [arecord]}))
        self.vm = await self.c.new_vm(env={"GREETING": "hello"})

    async def asyncTearDown(self):
        await self.vm.delete()
        await self.c.aclose()

    async def test_snapshots_and_fork(self):
        vm = await self.c.new_vm(labels={"suite": "pyasync"})
        try:
            await vm.fs.write_file("/workspace/a.txt", b"one")
            snap = await vm.snapshot()
            child = await vm.fork()
            await child.fs.write_file("/workspace/a.txt", b"child")
            self.assertEqual(await vm.fs.read_file("/workspace/a.txt"), b"one")
            await child.delete()
            restored = await self.c.new_vm(from_snapshot=snap.id)
            self.assertEqual(await restored.fs.read_file("/workspace/a.txt"), b"one")
            await restored.delete()
            self.assertEqual((await vm.pause()).state, "paused")
            self.assertEqual((await vm.resume()).state, "running")
            self.assertEqual([v.id for v in await self.c.list_vms(labels={"suite": "pyasync"})], [vm.id])
            await self.c.delete_snapshot(snap.id)
        finally:
            await vm.delete()

    async def test_exec(self):
        self.assertTrue(await self.c.healthy())
        self.assertEqual((await self.vm.info()).id, self.vm.id)
        self.assertIn(self.vm.id, [v.id for v in await self.c.list_vms()])
        res = await self.vm.run(["cat"], stdin=b"\x00\x01")
        self.assertEqual(res.stdout, b"\x00\x01")
        res = await self.vm.exec('echo "$GREETING" >&2; exit 7')
        self.assertEqual((res.exit_code, res.stderr), (7, b"hello\n"))
        out: List[bytes] = []
        res = await self.vm.exec("echo a; echo b", on_stdout=out.append)
        self.assertEqual((b"".join(out), res.exit_code), (b"a\nb\n", 0))
        items = [i async for i in self.vm.exec_stream("echo x; echo y >&2; exit 4")]
        last = items[-1]
        assert isinstance(last, ExecResult)
        self.assertEqual(last.exit_code, 4)
        self.assertEqual(b"".join(i.data for i in items if isinstance(i, Output) and i.stream == "stderr"), b"y\n")

    async def test_process(self):
        async with await self.vm.spawn(["sh", "-c", "cat; exit 5"]) as p:
            await p.write(b"one\n")
            first = await p.next_output()
            assert first is not None
            self.assertEqual(first.data, b"one\n")
            await p.write(b"two\n")
            await p.close_stdin()
            res = await p.wait()
            self.assertEqual((res.exit_code, res.stdout), (5, b"two\n"))
        p = await self.vm.spawn(["sh", "-c", "stty size; read x; stty size"], pty=PTY(rows=30, cols=100))
        screen = b""
        async for o in p:
            screen += o.data
            if b"30 100" in screen:
                break
        await p.resize(40, 120)
        await p.write(b"\r")
        res = await p.wait()
        self.assertIn(b"40 120", res.stdout)
        p = await self.vm.spawn(["sleep", "60"])
        await p.signal(9)
        self.assertEqual((await p.wait()).signal, "SIGKILL")
        with self.assertRaises(ProcessDone):
            await p.write(b"x")

    async def test_files_and_js(self):
        await self.vm.fs.write_file("/workspace/a/b.txt", b"hi")
        self.assertEqual(await self.vm.fs.read_file("/workspace/a/b.txt"), b"hi")
        self.assertEqual((await self.vm.fs.lstat("/workspace/a/b.txt")).size, 2)
        self.assertEqual([e.name for e in await self.vm.fs.read_dir("/workspace/a")], ["b.txt"])
        await self.vm.fs.mkdir_all("/workspace/a/c")
        await self.vm.fs.remove("/workspace/a/c")
        await self.vm.fs.upload("/workspace/t", {"k": b"v"})
        self.assertEqual(await self.vm.fs.download("/workspace/t"), {"k": b"v"})
        await self.vm.fs.remove_all("/workspace/t")
        with self.assertRaises(APIError) as cm:
            await self.vm.fs.lstat("/workspace/t")
        self.assertEqual(cm.exception.code, "not_found")
        self.assertEqual(await self.vm.js.evaluate("Promise.resolve(6*7)"), 42)
        res = await self.vm.js.execute("console.error('e')")
        self.assertEqual(res.stderr, b"e\n")
        async with await self.vm.js.new_context(timeout=5) as ctx:
            await ctx.evaluate("globalThis.k = 'v'")
            self.assertEqual(await ctx.evaluate("k"), "v")

    async def test_concurrent(self):
        # One client serves concurrent tasks.
        results = await asyncio.gather(*(self.vm.exec(f"echo {i}") for i in range(6)))
        self.assertEqual([r.stdout for r in results], [f"{i}\n".encode() for i in range(6)])

    async def test_cancel(self):
        # Cancelling a task ends its exec.
        await self.vm.fs.write_file("/tmp/pid", b"")
        task = asyncio.ensure_future(self.vm.exec("echo $$ > /tmp/pid; sleep 60"))
        while not await self.vm.fs.read_file("/tmp/pid"):
            await asyncio.sleep(0.05)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        # The server ended the program (polled: how soon is not the point).
        for _ in range(1200):
            if (await self.vm.exec("kill -0 $(cat /tmp/pid)")).exit_code != 0:
                break
            await asyncio.sleep(0.05)
        else:
            self.fail("the cancelled exec's program still runs")


def tearDownModule():
    # Every request either suite made is a route of ROUTES (the list the
    # Go test checks against openapi.json).
    unknown = SEEN - set(secexec_client.ROUTES)
    if unknown:
        raise AssertionError(f"requests outside ROUTES: {sorted(unknown)}")
    if len(SEEN) < 12:
        raise AssertionError(f"only {len(SEEN)} routes seen: {sorted(SEEN)}")


if __name__ == "__main__":
    unittest.main()
