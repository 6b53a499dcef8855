'use strict';
// The legacy url API (loaded on its first use) through every entry:
// resolve, resolveObject, Url, parse and format, with Node's names.
const url = require('url');
console.log(url.resolve.name, url.resolveObject.name, typeof url.Url);
console.log(url.resolve('http://a.example/b/c', '../d?e=1#f'));
console.log(url.resolve('/one/two', 'three'));
const o = url.resolveObject('http://a.example/b/', 'c');
console.log(o instanceof url.Url, o.href, o.pathname);
const p = url.parse('http://user:pw@host.example:8080/p/a/t/h?query=string#hash', true);
console.log(p instanceof url.Url, p.auth, p.port, p.pathname, JSON.stringify(p.query), p.hash);
console.log(url.parse(p) === p);
console.log(url.format({ protocol: 'https', hostname: 'x.example', pathname: '/y', query: { z: 1 } }));
const u = new url.Url();
console.log(u instanceof url.Url, u.href === null || u.href === undefined);
