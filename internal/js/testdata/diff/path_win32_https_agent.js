// path.win32.parse and isAbsolute, which tar uses to strip absolute entry
// names, and https.request's stack, which agent-base (npm's HTTP agents)
// reads to tell an https request from an http one.
const path = require('path');
const https = require('https');

for (const p of ['', '/', '\\', 'C:', 'C:\\', 'c:/x/y.txt', 'C:foo\\bar', '\\\\server\\share\\dir\\f.js',
  '//server/share', '//server', '\\\\?\\C:\\x', '/a/b/c.tar.gz', 'a/b/', 'file', '.bashrc', 'dir\\..', '../x/']) {
  console.log(JSON.stringify(p), JSON.stringify(path.win32.parse(p)), path.win32.isAbsolute(p));
}
console.log(path.win32.sep, path.win32.delimiter);

class StackAgent extends https.Agent {
  get protocol() { return new Error().stack.split('\n').some((l) => l.includes('node:https:')) ? 'https:' : 'http:'; }
  set protocol(v) {}
  addRequest(req) { console.log('addRequest'); req.destroy(); }
}
try {
  const req = https.request({ host: '127.0.0.1', port: 9, agent: new StackAgent() });
  req.on('error', () => {});
  console.log('constructed');
} catch (e) {
  console.log('threw', e.code);
}
