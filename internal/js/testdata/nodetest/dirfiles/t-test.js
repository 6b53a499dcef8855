require('node:test')('passes but exits 2', () => { process.exitCode = 2; });
