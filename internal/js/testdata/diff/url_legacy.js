// url: the legacy parse/format argument checks and parsed query,
// pathToFileURL (POSIX and { windows: true }) and urlToHttpOptions.
const url = require('url');
const show = (f) => {
  try { console.log('ok', f()); } catch (e) { console.log('throws', e.name, e.code, e.message); }
};
for (const v of [undefined, null, true, 0, [], {}, () => {}, Symbol('s')]) {
  show(() => url.parse(v));
  show(() => url.format(v));
}
show(() => [url.format(''), url.format({}), url.format('http://a.com/x?y#z'), url.format({ protocol: 'http', host: 'h', pathname: '/p' })]);
const u = new URL('http://user:pw@xn--mnchen-3ya.de:8080/p?q=1#frag');
show(() => [url.format(u), url.format(u, { fragment: false, search: false, auth: false }), url.format(u, { unicode: true })]);
show(() => url.format(u, 5));
const q = url.parse('/x?a=1&b=2&a=3', true).query;
show(() => [Object.getPrototypeOf(q), JSON.stringify(q), Object.getPrototypeOf(url.parse('/x', true).query), url.parse('/x?a', false).query]);
for (const p of ['/foo', '/dir/', '/foo bar', '/foo?bar#baz', '/foo%bar', '/foo\\bar', '/f\u00f3\u00f3', '/\ud83d\ude80', '/a\r\n\t<>"{}|^[]`~\x7f!$&\'()*+,;=:@', '/a/../b/./c']) {
  show(() => url.pathToFileURL(p).href);
}
for (const p of ['C:\\foo', 'C:\\dir\\', 'C:\\foo bar', 'C:\\foo#bar', 'C:\\foo\\..\\bar', '\\\\?\\C:\\path\\to\\file.txt', '\\\\nas\\My Docs\\File.doc', '\\\\?\\UNC\\server\\share\\folder\\file.txt', '\\\\host']) {
  show(() => url.pathToFileURL(p, { windows: true }).href);
}
show(() => url.pathToFileURL(5));
const o = url.urlToHttpOptions(new URL('http://a:b@[::1]:21/p?x=1#h'));
show(() => JSON.stringify(o));
show(() => { const c = url.urlToHttpOptions({ ...new URL('http://h/') }); return [c.protocol, c.hostname, c.port, c.path, c.href]; });
show(() => [url.parse('http://a.com', true).search, url.parse('http://a.com/?', true).search, url.parse('http://a.com').search]);
