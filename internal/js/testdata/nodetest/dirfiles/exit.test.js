process.exitCode = 3;
