require('node:test')('d', { skip: 'skipped d' }, () => {});
