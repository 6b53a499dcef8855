throw new Error('not a test file: never run');
