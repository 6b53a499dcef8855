package js

import (
	"encoding/json"
	"strconv"
	"testing"
)

// BenchmarkBridgeCalls measures bridge calls from inside the VM through
// the public APIs that make them (b.N rounds of 10000 calls each) and
// reports the time of one: util.types.isMap (isType: the dispatcher's
// cost with almost no body), a message posted on a MessageChannel and
// taken back with receiveMessageOnPort (portPost, which consumes bytes,
// and portRecv), and a socket's address (netName).
func BenchmarkBridgeCalls(b *testing.B) {
	v := newVM(b, nil)
	r := v.node(`
const { types } = require('util');
const { MessageChannel, receiveMessageOnPort } = require('worker_threads');
const net = require('net');
const runs = +process.argv[1], per = 10000;
const perCall = {};
const time = (name, f) => {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) for (let j = 0; j < per; j++) f();
  perCall[name] = Number(process.hrtime.bigint() - t0) / (runs * per);
};
const m = new Map();
let hits = 0;
time('isType', () => { if (types.isMap(m)) hits++; });
const { port1, port2 } = new MessageChannel();
const msg = 'x'.repeat(64);
time('portPostRecv', () => { port1.postMessage(msg); if (receiveMessageOnPort(port2).message === msg) hits++; });
port1.close();
const server = net.createServer().listen(0, '127.0.0.1', () => {
  time('netName', () => { if (server.address().port > 0) hits++; });
  server.close();
  if (hits !== 3 * runs * per) throw new Error('hits ' + hits);
  console.log(JSON.stringify(perCall));
});
`, strconv.Itoa(b.N))
	var perCall map[string]float64
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &perCall) != nil || len(perCall) != 3 {
		b.Fatalf("exit %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
	for name, ns := range perCall {
		b.ReportMetric(ns, name+"-ns/call")
	}
}
