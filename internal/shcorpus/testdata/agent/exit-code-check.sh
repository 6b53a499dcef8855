run_step() {
  local name=$1; shift
  if "$@" > /dev/null 2>&1; then
    echo "$name: ok"
  else
    echo "$name: failed ($?)"
  fi
}
run_step true-step true
run_step grep-step grep -q nope /dev/null
run_step missing-step no-such-binary
