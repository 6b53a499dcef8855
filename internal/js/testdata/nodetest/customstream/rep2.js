const { Transform } = require('node:stream');
module.exports = new Transform({ writableObjectMode: true, transform(e, _, cb) { cb(null, e.type === 'test:start' ? `start ${e.data.name}\n` : undefined); } });
