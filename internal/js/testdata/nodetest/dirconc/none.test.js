console.log('no tests');
