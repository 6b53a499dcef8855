f() {
  local -A cfg=([host]=localhost [port]=5432)
  echo "${cfg[host]}:${cfg[port]}"
}
f
