trap 'echo one' EXIT
trap 'echo two' EXIT
trap - EXIT
trap 'echo three' EXIT
echo body
