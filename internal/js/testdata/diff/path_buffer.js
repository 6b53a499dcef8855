const path = require('path');
console.log(path.join('/a/b', '..', 'c/', './d'), path.normalize('a//b/../c/.'), path.relative('/a/b/c', '/a/d'),
  path.parse('/home/u/file.tar.gz'), path.format({ dir: '/x', name: 'y', ext: '.z' }), path.extname('a.b.c'), path.isAbsolute('x'), path.sep, path.delimiter);
const b = Buffer.from('héllo wörld €', 'utf8');
console.log(b, b.length, b.toString('hex'), b.toString('base64'), b.toString('base64url'), b.toString('latin1'));
console.log(Buffer.concat([Buffer.from('ab'), Buffer.alloc(2, 'z')]), Buffer.compare(Buffer.from('a'), Buffer.from('b')), b.indexOf('w'), b.includes('€'));
const c = Buffer.alloc(10);
c.writeUInt32BE(0xdeadbeef, 0); c.writeInt16LE(-2, 4); c.writeDoubleLE === undefined;
console.log(c, c.readUInt32BE(0).toString(16), c.readInt16LE(4), c.subarray(0, 2), Buffer.byteLength('€'), Buffer.isBuffer(c), c.toJSON().data.length);
console.log(Buffer.from([1, 2, 3]).equals(Buffer.from([1, 2, 3])), Buffer.from('ff00', 'hex'), Buffer.from('aGk=', 'base64').toString());
