exec 3>&1
err=$( { echo "to stdout"; echo "to stderr" >&2; } 2>&1 >&3 )
exec 3>&-
echo "captured stderr: $err"
