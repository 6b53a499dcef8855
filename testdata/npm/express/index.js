const express = require('express');
const app = express();
app.get('/', (req, res) => res.send('ok from express'));
const server = app.listen(3000, async () => {
  const r = await fetch('http://127.0.0.1:3000/');
  console.log(r.status, await r.text());
  server.close();
});
