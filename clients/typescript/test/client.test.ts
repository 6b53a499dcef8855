// Tests of @secexec/client against a real `secexec serve`, whose URL and
// two tenants' tokens come from SECEXEC_URL, SECEXEC_TOKEN and
// SECEXEC_TOKEN_2. clients/clients_test.go packs the package with npm,
// installs the tarball into a fresh project and runs this there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHTTPServer } from "node:http";
import { createServer, type Socket } from "node:net";
import WebSocket from "ws";
import { APIError, Client, parseRetryAfter, Signals, type Process, type VM } from "@secexec/client";

const url = process.env.SECEXEC_URL!;
const token = process.env.SECEXEC_TOKEN!;
// node 20 has no global WebSocket: the ws package's is given.
const c = new Client(url, { token, WebSocket });
const other = new Client(url, { token: process.env.SECEXEC_TOKEN_2!, WebSocket });
const dec = new TextDecoder();

async function rejects(p: Promise<unknown>, status: number, code: string) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof APIError, String(e));
    assert.equal(e.status, status, e.message);
    assert.equal(e.code, code);
    return true;
  });
}

async function collect(p: Process): Promise<string> {
  let out = "";
  for await (const chunk of p.output()) out += dec.decode(chunk.data, { stream: true });
  return out;
}

// fillSlots attaches to --max-concurrent (8) processes, so that every
// further exec, file request or attach of the tenant is refused (429).
async function fillSlots(vm: VM): Promise<Process[]> {
  const procs: Process[] = [];
  for (;;) {
    try {
      procs.push(await vm.spawn(["cat"]));
    } catch (e) {
      // The attach that found no slot left is refused with 429.
      if (e instanceof APIError && e.status === 429 && e.code === "quota_exceeded") return procs;
      throw e;
    }
  }
}

test("client", async (t) => {
  assert.equal(await c.healthy(), true);
  const vm = await c.createVM({ env: { GREETING: "hello" } });
  try {
    await t.test("exec keeps bytes", async () => {
      const all = new Uint8Array(256).map((_, i) => i);
      const r = await vm.run(["cat"], { stdin: all });
      assert.equal(r.exit_code, 0);
      assert.equal(r.outcome, "succeeded");
      assert.deepEqual(r.stdout, all);
      const f = await vm.exec('echo "$GREETING" >&2; exit 7');
      assert.equal(f.exit_code, 7);
      assert.equal(f.outcome, "failed");
      assert.equal(dec.decode(f.stderr), "hello\n");
      await rejects(vm.exec(" "), 0, "bad_request");
    });

    await t.test("exec with callbacks", async () => {
      let out = "", err = "";
      const r = await vm.exec("echo a; echo b >&2; echo c", {
        onStdout: (b) => (out += dec.decode(b)),
        onStderr: (b) => (err += dec.decode(b)),
      });
      assert.equal(r.exit_code, 0);
      assert.equal(out, "a\nc\n");
      assert.equal(err, "b\n");
      assert.equal(r.stdout.length, 0);
    });

    await t.test("exec as an async iterator", async () => {
      let out = "", err = "", last = "";
      for await (const e of vm.stream("echo a; echo b >&2; echo c")) {
        last = e.event;
        if (e.event === "stdout") out += dec.decode(e.data);
        if (e.event === "stderr") err += dec.decode(e.data);
        if (e.event === "exit") assert.equal(e.result.exit_code, 0);
      }
      assert.equal(out, "a\nc\n");
      assert.equal(err, "b\n");
      assert.equal(last, "exit");
    });

    await t.test("AbortSignal ends a streamed exec", async () => {
      const ac = new AbortController();
      await assert.rejects(async () => {
        for await (const e of vm.stream("echo started; sleep 600", { signal: ac.signal })) {
          if (e.event === "stdout") ac.abort();
        }
      }, (e: unknown) => e instanceof Error && e.name === "AbortError");
      await assert.rejects(vm.info({ signal: AbortSignal.abort() }), (e: unknown) => e instanceof Error && e.name === "AbortError");
    });

    await t.test("exec timeout", async () => {
      const r = await vm.exec("sleep 600", { timeoutMs: 100 });
      assert.equal(r.outcome, "timed_out");
      assert.equal(r.exit_code, 124);
    });

    await t.test("files", async () => {
      const dir = "/workspace/ts dir/sub%2F";
      await c.vm(vm.id).fs.mkdir(dir);
      await vm.fs.writeFile(dir + "/a b.bin", new Uint8Array([0, 255]));
      assert.deepEqual(await vm.fs.readFile(dir + "/a b.bin"), new Uint8Array([0, 255]));
      // A view sends its own bytes only; a string is sent as UTF-8.
      await vm.fs.writeFile(dir + "/view", new Uint8Array([1, 2, 3, 4]).subarray(1, 3));
      assert.deepEqual(await vm.fs.readFile(dir + "/view"), new Uint8Array([2, 3]));
      await vm.fs.writeFile(dir + "/view", "é\n");
      assert.equal(dec.decode((await vm.run(["cat", dir + "/view"])).stdout), "é\n");
      await vm.fs.remove(dir + "/view");
      const st = await vm.fs.stat(dir + "/a b.bin");
      assert.equal(st.size, 2);
      assert.equal(st.type, "file");
      assert.deepEqual((await vm.fs.readDir(dir)).map((e) => e.name), ["a b.bin"]);
      assert.equal(dec.decode((await vm.run(["ls", dir])).stdout), "a b.bin\n");
      await rejects(vm.fs.remove("/workspace/ts dir"), 409, "conflict");
      await vm.fs.remove("/workspace/ts dir", { recursive: true });
      await rejects(vm.fs.readFile(dir + "/a b.bin"), 404, "not_found");
      await rejects(vm.fs.readFile("relative"), 0, "bad_request");
    });

    await t.test("archives", async () => {
      await vm.exec("mkdir -p /workspace/src/d && printf one > /workspace/src/d/1.txt && ln -s d/1.txt /workspace/src/link");
      const tar = await vm.fs.readArchive("/workspace/src");
      assert.ok(tar.length >= 1024 && tar.length % 512 === 0, `a tar of ${tar.length} bytes`);
      await vm.fs.writeArchive("/workspace/copy", tar);
      assert.equal(dec.decode(await vm.fs.readFile("/workspace/copy/d/1.txt")), "one");
      assert.equal(dec.decode((await vm.exec("cat /workspace/copy/link")).stdout), "one");
      await rejects(vm.fs.writeArchive("/workspace/bad", new TextEncoder().encode("x".repeat(1024))), 400, "bad_archive");
    });

    await t.test("javascript", async () => {
      assert.deepEqual(await vm.js.evaluate("[1+1, 'é']"), [2, "é"]);
      await rejects(vm.js.evaluate("null.x"), 422, "eval_error");
      const r = await vm.js.execute("console.log(6*7)");
      assert.equal(dec.decode(r.stdout), "42\n");
      let out = "";
      const s = await vm.js.execute("console.log('streamed')", { onStdout: (b) => (out += dec.decode(b)) });
      assert.equal(s.exit_code, 0);
      assert.equal(out, "streamed\n");
    });

    await t.test("context", async () => {
      const ctx = await vm.js.createContext();
      await ctx.evaluate("globalThis.n = 41");
      assert.equal(await ctx.evaluate<number>("++n"), 42);
      await ctx.close();
      await rejects(ctx.evaluate("n"), 404, "not_found");
    });

    await t.test("process with stdin", async () => {
      const p = await vm.spawn(["sh", "-c", "cat; echo done >&2; exit 5"]);
      assert.ok((await vm.processes()).some((x) => x.pid === p.pid));
      const big = "x".repeat(100_000) + "\n";
      p.write(big);
      p.write(new Uint8Array([0xc3, 0xa9]));
      p.closeStdin();
      let out = "", err = "";
      for await (const chunk of p.output()) {
        if (chunk.stream === "stdout") out += dec.decode(chunk.data, { stream: true });
        else err += dec.decode(chunk.data);
      }
      assert.equal(out, big + "é");
      assert.equal(err, "done\n");
      assert.deepEqual(await p.wait(), { exit_code: 5 });
      assert.throws(() => p.write("late"), (e: unknown) => e instanceof APIError && e.code === "conflict");
    });

    await t.test("process signal", async () => {
      const p = await vm.spawn(["sleep", "600"]);
      p.kill(Signals.SIGTERM);
      const st = await p.wait();
      assert.equal(st.exit_code, 143);
      assert.equal(st.signal, "SIGTERM");
      assert.throws(() => p.kill(0), APIError);
    });

    await t.test("process on a terminal", async () => {
      const p = await vm.spawn(["sh", "-c", "read line; stty size; echo \"[$line]\"; exit 3"], { pty: { rows: 24, cols: 80 } });
      p.resize(30, 100);
      p.write("go\n");
      const out = await collect(p);
      // The terminal echoes the input, maps LF to CRLF, and has the new size.
      assert.equal(out, "go\r\n30 100\r\n[go]\r\n");
      assert.equal((await p.wait()).exit_code, 3);
      assert.throws(() => p.resize(0, 10), APIError);
    });

    await t.test("a WebSocket that cannot send headers (a browser's) sends the token as a subprotocol", async () => {
      // As a browser's does: the init object is taken as a subprotocol name.
      class Browserish extends WebSocket {
        constructor(u: string, protocols: unknown) {
          if (typeof protocols !== "string" && !Array.isArray(protocols)) throw new SyntaxError("invalid subprotocol");
          super(u, protocols);
        }
      }
      const bc = new Client(url, { token, WebSocket: Browserish as unknown as typeof WebSocket });
      const p = await bc.vm(vm.id).spawn(["cat"]);
      p.write("from-a-browser\n");
      p.closeStdin();
      assert.equal(await collect(p), "from-a-browser\n");
      assert.equal((await p.wait()).exit_code, 0);
    });

    await t.test("output that comes with the handshake is kept", async () => {
      // The process writes and exits at once: its frames may come in the
      // same read as the handshake, before the Process has the socket.
      for (let i = 0; i < 20; i++) {
        const p = await vm.spawn(["echo", "early-" + i]);
        assert.equal(await collect(p), "early-" + i + "\n");
        assert.equal((await p.wait()).exit_code, 0);
      }
    });

    await t.test("a WebSocket that takes neither headers nor subprotocols", async () => {
      const Neither = function () {
        throw new SyntaxError("no");
      } as unknown as typeof WebSocket;
      const bc = new Client(url, { token, WebSocket: Neither });
      await rejects(bc.vm(vm.id).spawn(["sleep", "601"]), 0, "not_implemented");
      // The process it started was deleted, not left to its lifetime limit.
      assert.ok(!(await vm.processes()).some((x) => x.argv.join(" ") === "sleep 601"));
    });

    await t.test("close kills the process", async () => {
      const p = await vm.spawn(["sleep", "600"]);
      await p.close();
      // Killed, then cut: the exit may or may not have come first.
      const st = await p.wait().catch(() => ({ exit_code: 137, signal: "SIGKILL" }));
      assert.equal(st.signal, "SIGKILL");
      // The server forgets it once its session's end is handled.
      let listed = true;
      for (let i = 0; i < 500 && listed; i++) {
        listed = (await vm.processes()).some((x) => x.pid === p.pid);
        if (listed) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(!listed, `process ${p.pid} is still listed after its session closed`);
    });

    await t.test("429 is retried after Retry-After", async () => {
      const statuses: number[] = [];
      let saw429 = () => {};
      const refused = new Promise<void>((resolve) => (saw429 = resolve));
      const watched = new Client(url, {
        token,
        WebSocket,
        fetch: async (input, init) => {
          const r = await fetch(input, init);
          statuses.push(r.status);
          if (r.status === 429) saw429();
          return r;
        },
      });
      const procs = await fillSlots(vm);
      try {
        await rejects(new Client(url, { token, maxRetries: 0 }).vm(vm.id).exec("true"), 429, "quota_exceeded");
        await assert.rejects(new Client(url, { token, maxRetries: 0 }).vm(vm.id).exec("true"),
          (e: unknown) => e instanceof APIError && e.retryAfterMs === 1000);
        const pending = watched.vm(vm.id).exec("echo through");
        await refused;
        await procs.pop()!.close();
        const r = await pending;
        assert.equal(dec.decode(r.stdout), "through\n");
        assert.equal(statuses[0], 429);
        assert.equal(statuses[statuses.length - 1], 200);
        // A control call's timeout also cuts the waits between its retries.
        procs.push(await vm.spawn(["cat"]));
        const short = new Client(url, { token, timeoutMs: 200 });
        await assert.rejects(short.vm(vm.id).fs.stat("/workspace"), (e: unknown) => e instanceof Error && e.name === "TimeoutError");
      } finally {
        await Promise.all(procs.map((p) => p.close()));
      }
    });

    await t.test("host tools", async () => {
      // A tool is an HTTP endpoint of the user's; the server POSTs the
      // guest's calls to it (the test server allows loopback tools).
      const calls: unknown[] = [];
      const tool = createHTTPServer((req, res) => {
        let body = "";
        req.on("data", (d: Buffer) => (body += d.toString()));
        req.on("end", () => {
          const call = JSON.parse(body) as { name: string; args: { a: number; b: number } };
          calls.push(call.name);
          res.setHeader("Content-Type", "application/json");
          res.end(JSON.stringify({ sum: call.args.a + call.args.b }));
        });
      });
      await new Promise<void>((resolve) => tool.listen(0, "127.0.0.1", resolve));
      const addr = tool.address();
      assert.ok(addr && typeof addr === "object");
      const tvm = await c.createVM({
        tools: [{ name: "add", url: `http://127.0.0.1:${addr.port}/add` }],
        permissions: {
          fs: [{ effect: "allow", paths: ["/**"] }],
          exec: [{ effect: "allow", commands: ["*"] }],
          env: [{ effect: "allow", keys: ["*"] }],
          tools: [{ effect: "allow", names: ["add"] }],
        },
      });
      try {
        const r = await tvm.js.execute("require('secexec:tools').call('add', {a: 1, b: 2}).then((r) => console.log(JSON.stringify(r)))");
        assert.equal(dec.decode(r.stderr), "");
        assert.equal(dec.decode(r.stdout), '{"sum":3}\n');
        assert.deepEqual(calls, ["add"]);
      } finally {
        await tvm.delete();
        tool.close();
      }
      // A literal special address outside the allowed networks is refused.
      await rejects(c.createVM({ tools: [{ name: "meta", url: "http://169.254.169.254/" }] }), 400, "bad_request");
    });

    await t.test("snapshots, fork, previews, pause, labels", async () => {
      const pvm = await c.createVM({ labels: { suite: "ts" }, ttl_ms: 600000 });
      try {
        await pvm.fs.writeFile("/workspace/a.txt", "one");
        const snap = await pvm.snapshot({ labels: { step: "1" } });
        assert.equal(snap.labels?.step, "1");
        assert.ok((await c.listSnapshots()).some((s) => s.id === snap.id));
        assert.equal((await c.snapshot(snap.id)).id, snap.id);
        await rejects(other.snapshot(snap.id), 404, "not_found");
        await pvm.fs.writeFile("/workspace/a.txt", "two");
        const restored = await c.createVM({ from_snapshot: snap.id });
        try {
          assert.equal(dec.decode(await restored.fs.readFile("/workspace/a.txt")), "one");
        } finally {
          await restored.delete();
        }
        const child = await pvm.fork();
        try {
          await child.fs.writeFile("/workspace/a.txt", "child");
          assert.equal(dec.decode(await pvm.fs.readFile("/workspace/a.txt")), "two");
        } finally {
          await child.delete();
        }
        await c.deleteSnapshot(snap.id);
        await rejects(c.snapshot(snap.id), 404, "not_found");

        // A preview opens the guest's port with no token, until revoked.
        await rejects(pvm.preview(3000), 404, "not_found");
        const srv = await pvm.spawn(["node", "-e", "require('http').createServer((q, r) => r.end('hi ' + q.url)).listen(3000, () => console.log('ready'))"]);
        for await (const chunk of srv.output()) if (dec.decode(chunk.data).includes("ready")) break;
        const pv = await pvm.preview(3000, 60);
        assert.equal(pv.port, 3000);
        const res = await fetch(pv.url + "x");
        assert.equal(await res.text(), "hi /x");
        await pvm.revokePreview(pv.id);
        assert.equal((await fetch(pv.url + "x")).status, 404);
        await srv.close();

        // Labels filter the list; pause frees the VM, the next request restores it.
        assert.deepEqual((await c.listVMs({ labels: { suite: "ts" } })).map((v) => v.id), [pvm.id]);
        const patched = await pvm.patch({ labels: { suite: "ts", more: "yes" } });
        assert.equal(patched.labels?.more, "yes");
        assert.equal((await pvm.pause()).state, "paused");
        assert.deepEqual((await c.listVMs({ state: "paused" })).map((v) => v.id), [pvm.id]);
        assert.equal(dec.decode(await pvm.fs.readFile("/workspace/a.txt")), "two");
        assert.equal((await pvm.info()).state, "running");
        assert.equal((await pvm.pause()).state, "paused");
        assert.equal((await pvm.resume()).state, "running");
      } finally {
        await pvm.delete();
      }
    });

    await t.test("tenancy", async () => {
      assert.ok(!(await other.listVMs()).some((v) => v.id === vm.id));
      await rejects(other.vm(vm.id).exec("true"), 404, "not_found");
      await rejects(other.vm(vm.id).spawn(["true"]), 404, "not_found");
      await rejects(new Client(url, { token: "not-a-token" }).listVMs(), 401, "unauthorized");
      assert.throws(() => new Client("ftp://x", { token }), APIError);
    });
  } finally {
    await vm.delete();
  }
  await rejects(vm.info(), 404, "not_found");
});

test("timeoutMs bounds control calls against a server that never answers", async () => {
  const held: Socket[] = [];
  const silent = createServer((sock) => held.push(sock));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  try {
    const addr = silent.address();
    assert.ok(addr && typeof addr === "object");
    const sc = new Client(`http://127.0.0.1:${addr.port}`, { token, timeoutMs: 200 });
    await assert.rejects(sc.listVMs(), (e: unknown) => e instanceof Error && e.name === "TimeoutError");
    await assert.rejects(sc.vm("x").fs.stat("/"), (e: unknown) => e instanceof Error && e.name === "TimeoutError");
    // An exec is not a control call: only its signal ends it.
    const ac = new AbortController();
    const pending = sc.vm("x").exec("true", { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 400));
    ac.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof Error && e.name === "AbortError");
  } finally {
    held.forEach((s) => s.destroy());
    silent.close();
  }
});

test("a redirect is refused, never followed with the token", async () => {
  const seen: (string | undefined)[] = [];
  const target = createHTTPServer((req, res) => {
    seen.push(req.headers.authorization);
    res.end("{}");
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  const tAddr = target.address();
  assert.ok(tAddr && typeof tAddr === "object");
  const redirector = createHTTPServer((req, res) => {
    res.writeHead(307, { Location: `http://127.0.0.1:${tAddr.port}${req.url}` });
    res.end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  const rAddr = redirector.address();
  assert.ok(rAddr && typeof rAddr === "object");
  try {
    const rc = new Client(`http://127.0.0.1:${rAddr.port}`, { token });
    await assert.rejects(rc.listVMs(), TypeError);
    await assert.rejects(rc.vm("x").exec("true"), TypeError);
    assert.deepEqual(seen, []);
  } finally {
    redirector.close();
    target.close();
  }
});

test("Retry-After", () => {
  assert.equal(parseRetryAfter("1"), 1000);
  assert.equal(parseRetryAfter(" 30 "), 30_000);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0);
  const later = parseRetryAfter(new Date(Date.now() + 3_600_000).toUTCString())!;
  assert.ok(later > 3_500_000 && later <= 3_600_000, String(later));
  assert.equal(parseRetryAfter("999999999"), 24 * 3600 * 1000);
});
