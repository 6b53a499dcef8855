'use strict';
// The express app of express_test.js; HTTPJS_USE_OURS=1 serves it through
// our http module.
const path = require('path');

let which = 'node';
if (process.env.HTTPJS_USE_OURS) {
  const { http } = require('./load.js').load(process.env.HTTPJS_USE_OURS);
  // A require.cache entry named like a builtin wins over the builtin for
  // require('http') (not for 'node:http').
  require.cache.http = { id: 'http', filename: 'http', loaded: true, exports: http };
  which = 'ours';
}
const express = require(path.join(process.env.HTTPJS_DEPS, 'node_modules', 'express'));
if (which === 'ours' && require('http') !== require.cache.http.exports) throw new Error('injection failed');

const app = express();
app.use(express.json());
const items = [{ id: 1, name: 'a' }, { id: 2, name: 'b' }, { id: 3, name: 'c' }];
app.get('/api/items', (req, res) => res.json(items.slice(0, Number(req.query.limit) || 10)));
app.post('/api/items', (req, res) => res.status(201).json({ created: req.body, type: req.get('content-type') }));
app.get('/api/items/:id', (req, res) => res.set('X-Id', req.params.id).json({ id: Number(req.params.id) }));
app.get('/api/stream', (req, res) => {
  res.type('text/plain');
  res.write('one,');
  setTimeout(() => res.end('two'), 10);
});
app.use((err, req, res, next) => {
  void next;
  res.status(err.status || 500).json({ error: err.type || err.message });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port} ${which}\n`);
});
