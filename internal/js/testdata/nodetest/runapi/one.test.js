require('node:test')('one ok', () => {});
