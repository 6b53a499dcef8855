process.stderr.write('to stderr\n'); require('node:test')('x', () => {});
