// The network rows of secexec's benchmark, measured on the upstream
// runtime (secure-exec/agentOS) for a side-by-side comparison:
//   fetch       a guest `node -e "fetch(URL)"` exec against an HTTP server on
//               the host's loopback (p50/p95 over N runs);
//   guest-http  requests per second from the host to a guest node HTTP
//               server (vm.fetch(port, request)), 4 clients for 2 s.
// Run it where ../shared/bench/peer-setup.sh installed the upstream runtime:
//   cp internal/bench/upstream/net-bench.mjs DIR/se/ && cd DIR/se && NODE22 net-bench.mjs 30
import http from "node:http";
import { init, shutdown } from "secure-exec";
import { AgentOs } from "@rivet-dev/agentos-core";

const N = Number(process.argv[2] || 30);
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

const srv = http.createServer((q, s) => s.end("ok"));
await new Promise((r) => srv.listen(0, "127.0.0.1", r));
const port = srv.address().port;

await init();
// The upstream VM reaches a host loopback port only when it is exempted.
const vm = await AgentOs.create({ permissions: { network: "allow" }, loopbackExemptPorts: [port] });
const cmd = `node -e "fetch('http://127.0.0.1:${port}/').then((r) => r.text()).then((t) => { if (t !== 'ok') process.exit(1) })"`;
let r = await vm.process.exec(cmd);
if (r.exitCode !== 0) {
  console.log(`fetch: exit ${r.exitCode} ${JSON.stringify(r).slice(0, 300)}`);
} else {
  const a = [];
  for (let i = 0; i < N; i++) { const t0 = performance.now(); await vm.process.exec(cmd); a.push(performance.now() - t0); }
  console.log(`fetch                  p50 ${pct(a, .5).toFixed(2)} ms  p95 ${pct(a, .95).toFixed(2)} ms  n=${a.length}`);
}

await vm.filesystem.writeFile("/tmp/server.js", "require('http').createServer((q, s) => s.end('ok')).listen(8080)");
const bg = await vm.process.spawn("node", ["/tmp/server.js"]);
let ready = false;
for (let i = 0; i < 100 && !ready; i++) {
  try { const res = await vm.fetch(8080, new Request("http://guest/")); ready = (await res.text()) === "ok"; } catch { await new Promise((r) => setTimeout(r, 100)); }
}
if (!ready) {
  console.log("guest-http: the guest server never answered");
} else {
  let n = 0;
  const end = performance.now() + 2000;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (performance.now() < end) { const res = await vm.fetch(8080, new Request("http://guest/")); await res.text(); n++; }
  }));
  console.log(`guest-http             ${(n / 2).toFixed(1)} requests/s  n=${n}`);
}
await vm.process.kill(bg.pid).catch(() => {});
await vm.dispose();
await shutdown();
srv.close();
process.exit(0);
