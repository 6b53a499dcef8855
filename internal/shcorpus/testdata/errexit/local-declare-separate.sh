set -e
f() {
  local x
  x=$(false)
  echo REACHED
}
f
