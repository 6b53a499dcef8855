set -e
f() {
  local x=$(false)
  echo "reached: local masks the status ($?)"
}
f
