# ulimit: setting and reading back the core file size (what scripts do
# before running a program expected to abort), and a bad number.
ulimit -c 0
echo "set 0: $?"
ulimit -c
ulimit -S -c
ulimit -c abc
echo "bad number: $?"
ulimit -c 0 && ulimit -c
