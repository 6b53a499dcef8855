f=<(true)
case $f in
  /dev/fd/*|/proc/self/fd/*) echo "looks like a fd path" ;;
  *) echo "unexpected: $f" ;;
esac
