// Tests of the TypeScript client against a real `secexec serve`, whose
// URL and two tenants' tokens come from SECEXEC_URL, SECEXEC_TOKEN and
// SECEXEC_TOKEN_2. clients/clients_test.go bundles this file with esbuild
// and runs it with node.
import { test } from "node:test";
import assert from "node:assert/strict";
import { APIError, Client } from "./secexec";

const url = process.env.SECEXEC_URL!;
const c = new Client(url, process.env.SECEXEC_TOKEN!);
const other = new Client(url, process.env.SECEXEC_TOKEN_2!);
const dec = new TextDecoder();

async function rejects(p: Promise<unknown>, status: number, code: string) {
  await assert.rejects(p, (e: unknown) => e instanceof APIError && e.status === status && e.code === code);
}

test("client", async (t) => {
  assert.equal(await c.healthy(), true);
  const vm = await c.createVM({ env: { GREETING: "hello" } });
  try {
    await t.test("exec keeps bytes", async () => {
      const all = new Uint8Array(256).map((_, i) => i);
      const r = await c.exec(vm.id, { argv: ["cat"], stdin: all });
      assert.equal(r.exit_code, 0);
      assert.equal(r.outcome, "succeeded");
      assert.deepEqual(r.stdout, all);
      const f = await c.exec(vm.id, { cmd: 'echo "$GREETING" >&2; exit 7' });
      assert.equal(f.exit_code, 7);
      assert.equal(dec.decode(f.stderr), "hello\n");
    });
    await t.test("stream", async () => {
      let out = "", err = "", last = "";
      for await (const e of c.execStream(vm.id, { cmd: "echo a; echo b >&2; echo c" })) {
        last = e.event;
        if (e.event === "stdout") out += dec.decode(e.data);
        if (e.event === "stderr") err += dec.decode(e.data);
        if (e.event === "exit") assert.equal(e.result.exit_code, 0);
      }
      assert.equal(out, "a\nc\n");
      assert.equal(err, "b\n");
      assert.equal(last, "exit");
    });
    await t.test("files", async () => {
      await c.writeFile(vm.id, "/workspace/ts dir/a.bin", new Uint8Array([0, 255]));
      assert.deepEqual(await c.readFile(vm.id, "/workspace/ts dir/a.bin"), new Uint8Array([0, 255]));
      assert.equal((await c.stat(vm.id, "/workspace/ts dir/a.bin")).size, 2);
      assert.deepEqual((await c.readDir(vm.id, "/workspace/ts dir")).map((e) => e.name), ["a.bin"]);
      await c.remove(vm.id, "/workspace/ts dir", true);
      await rejects(c.readFile(vm.id, "/workspace/ts dir/a.bin"), 404, "not_found");
    });
    await t.test("javascript", async () => {
      assert.deepEqual(await c.evaluate(vm.id, "[1+1, 'é']"), [2, "é"]);
      await rejects(c.evaluate(vm.id, "null.x"), 422, "eval_error");
      const r = await c.execute(vm.id, "console.log(6*7)");
      assert.equal(dec.decode(r.stdout), "42\n");
    });
    await t.test("context", async () => {
      const cid = await c.createContext(vm.id);
      await c.contextEvaluate(vm.id, cid, "globalThis.n = 41");
      assert.equal(await c.contextEvaluate(vm.id, cid, "++n"), 42);
      await c.deleteContext(vm.id, cid);
      await rejects(c.contextEvaluate(vm.id, cid, "n"), 404, "not_found");
    });
    await t.test("tenancy", async () => {
      assert.ok(!(await other.listVMs()).some((v) => v.id === vm.id));
      await rejects(other.exec(vm.id, { cmd: "true" }), 404, "not_found");
      await rejects(new Client(url, "not-a-token").listVMs(), 401, "unauthorized");
    });
  } finally {
    await c.deleteVM(vm.id);
  }
});
