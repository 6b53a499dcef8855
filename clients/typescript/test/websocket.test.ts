// Processes over the platform's own WebSocket (undici's: node 22's
// global, node 20's behind --experimental-websocket), with no WebSocket
// given to the client. clients/clients_test.go runs this file apart,
// with that flag.
import { test } from "node:test";
import assert from "node:assert/strict";
import { APIError, Client } from "@secexec/client";

test("global WebSocket", async () => {
  assert.equal(typeof globalThis.WebSocket, "function");
  const c = new Client(process.env.SECEXEC_URL!, { token: process.env.SECEXEC_TOKEN! });
  const vm = await c.createVM();
  try {
    const p = await vm.spawn(["sh", "-c", "read x; echo got $x; echo err >&2"]);
    p.write("hi\n");
    let out = "", err = "";
    for await (const chunk of p.output()) {
      if (chunk.stream === "stdout") out += new TextDecoder().decode(chunk.data);
      else err += new TextDecoder().decode(chunk.data);
    }
    assert.equal(out, "got hi\n");
    assert.equal(err, "err\n");
    assert.deepEqual(await p.wait(), { exit_code: 0 });
    // Refused attaches still fail with an APIError.
    await assert.rejects(new Client(c.url, { token: "not-a-token" }).vm(vm.id).spawn(["true"]), APIError);
  } finally {
    await vm.delete();
  }
});
