// Calls every JSON, file and archive route of a secexec server through
// openapi-fetch, a client driven only by openapi.json's paths, methods
// and parameters, and prints the operations that answered as documented.
// TestGeneratedClient runs it against a real `secexec serve`.
import createClient from "openapi-fetch";

const client = createClient({
  baseUrl: process.env.SECEXEC_URL,
  headers: { Authorization: `Bearer ${process.env.TOKEN}` },
});
const done = [];
const raw = { bodySerializer: (b) => b, headers: { "Content-Type": "application/octet-stream" } };

// call makes one request and checks its status; it returns the answer.
async function call(method, path, init, status) {
  const res = await client[method](path, init);
  if (res.response.status !== status) {
    throw new Error(`${method} ${path}: ${res.response.status} ${JSON.stringify(res.error)}, want ${status}`);
  }
  done.push(`${method} ${path}`);
  return res;
}

await call("GET", "/healthz", {}, 200);
await call("GET", "/readyz", {}, 200);
await call("GET", "/openapi.json", {}, 200);
await call("GET", "/metrics", { parseAs: "text" }, 200);

const vm = (await call("POST", "/v1/vms", {
  body: { env: { GREETING: "hi" }, limits: { processes: 16 },
    permissions: { fs: [{ effect: "allow", paths: ["/**"] }], exec: [{ effect: "allow", commands: ["*"] }],
      net: [{ effect: "allow", ops: ["listen"], hosts: ["*"] }] } },
}, 201)).data;
const id = { path: { id: vm.id } };
await call("GET", "/v1/vms", {}, 200);
await call("GET", "/v1/vms/{id}", { params: id }, 200);

const ex = (await call("POST", "/v1/vms/{id}/exec", { params: id, body: { cmd: "echo $GREETING" } }, 200)).data;
if (Buffer.from(ex.stdout, "base64").toString() !== "hi\n") throw new Error(`exec: ${JSON.stringify(ex)}`);

// A nested path is one parameter: the client encodes its slashes (%2F).
const file = { path: { id: vm.id, path: "workspace/deep/a.txt" } };
await call("PUT", "/v1/vms/{id}/files/{path}", { params: file, body: "nested\n", ...raw }, 204);
const read = await call("GET", "/v1/vms/{id}/files/{path}", { params: file, parseAs: "text" }, 200);
if (read.data !== "nested\n") throw new Error(`read back ${JSON.stringify(read.data)}`);
const dir = { path: { id: vm.id, path: "workspace/deep" } };
const list = await call("GET", "/v1/vms/{id}/files/{path}", { params: { ...dir, query: { list: true } } }, 200);
if (list.data.entries[0].name !== "a.txt") throw new Error(`list: ${JSON.stringify(list.data)}`);
const tar = await call("GET", "/v1/vms/{id}/archive", { params: { ...id, query: { path: "/workspace/deep" } }, parseAs: "arrayBuffer" }, 200);
await call("PUT", "/v1/vms/{id}/archive", {
  params: { ...id, query: { path: "/workspace/copy" } }, body: new Uint8Array(tar.data),
  bodySerializer: (b) => b, headers: { "Content-Type": "application/x-tar" },
}, 204);
await call("DELETE", "/v1/vms/{id}/files/{path}", { params: { path: { id: vm.id, path: "workspace/copy" }, query: { recursive: true } } }, 204);

await call("POST", "/v1/vms/{id}/js/evaluate", { params: id, body: { code: "[1, 2].map(x => x * 3)" } }, 200);
await call("POST", "/v1/vms/{id}/js/execute", { params: id, body: { code: "console.log(42)" } }, 200);
const ctx = (await call("POST", "/v1/vms/{id}/contexts", { params: id, body: {} }, 201)).data;
const cid = { path: { id: vm.id, cid: ctx.id } };
await call("POST", "/v1/vms/{id}/contexts/{cid}/evaluate", { params: cid, body: { code: "globalThis.n = 41" } }, 200);
const v = (await call("POST", "/v1/vms/{id}/contexts/{cid}/evaluate", { params: cid, body: { code: "n + 1" } }, 200)).data;
if (v.value !== 42) throw new Error(`context: ${JSON.stringify(v)}`);
await call("DELETE", "/v1/vms/{id}/contexts/{cid}", { params: cid }, 204);

const proc = (await call("POST", "/v1/vms/{id}/processes", {
  params: id, body: { argv: ["node", "-e", "require('http').createServer((q, r) => r.end('ok')).listen(3000)"] },
}, 201)).data;
await call("GET", "/v1/vms/{id}/processes", { params: id }, 200);
// A preview needs a listener: wait for the guest server (an event, polled).
let pv;
for (let tries = 0; ; tries++) {
  if (tries === 600) throw new Error("the guest server never listened");
  const r = await client.POST("/v1/vms/{id}/previews", { params: id, body: { port: 3000, ttl_seconds: 60 } });
  if (r.response.status === 201) { pv = r.data; done.push("POST /v1/vms/{id}/previews"); break; }
  if (r.response.status !== 404) throw new Error(`preview: ${r.response.status} ${JSON.stringify(r.error)}`);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
await call("DELETE", "/v1/vms/{id}/previews/{pid}", { params: { path: { id: vm.id, pid: pv.id } } }, 204);
await call("DELETE", "/v1/vms/{id}/processes/{pid}", { params: { path: { id: vm.id, pid: proc.pid } } }, 204);

const patched = (await call("PATCH", "/v1/vms/{id}", { params: id, body: { ttl_ms: 3600000, labels: { by: "openapi-fetch" } } }, 200)).data;
if (patched.labels.by !== "openapi-fetch" || !patched.expires_at) throw new Error(`patch: ${JSON.stringify(patched)}`);
const paused = (await call("POST", "/v1/vms/{id}/pause", { params: id, body: {} }, 200)).data;
if (paused.state !== "paused") throw new Error(`pause: ${JSON.stringify(paused)}`);
const resumed = (await call("POST", "/v1/vms/{id}/resume", { params: id }, 200)).data;
if (resumed.state !== "running") throw new Error(`resume: ${JSON.stringify(resumed)}`);
const back = await call("GET", "/v1/vms/{id}/files/{path}", { params: file, parseAs: "text" }, 200);
if (back.data !== "nested\n") throw new Error(`after a pause: ${JSON.stringify(back.data)}`);

const snap = (await call("POST", "/v1/vms/{id}/snapshots", { params: id, body: { labels: { by: "openapi-fetch" } } }, 201)).data;
const sid = { path: { sid: snap.id } };
await call("GET", "/v1/snapshots", {}, 200);
await call("GET", "/v1/snapshots/{sid}", { params: sid }, 200);
const fork = (await call("POST", "/v1/vms/{id}/fork", { params: id }, 201)).data;
await call("DELETE", "/v1/vms/{id}", { params: { path: { id: fork.id } } }, 204);
await call("DELETE", "/v1/snapshots/{sid}", { params: sid }, 204);
await call("DELETE", "/v1/vms/{id}", { params: id }, 204);

console.log(JSON.stringify(done));
