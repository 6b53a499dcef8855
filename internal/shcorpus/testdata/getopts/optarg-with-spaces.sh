set -- -m "a message with spaces" -q
while getopts "m:q" o; do
  case $o in m) echo "msg=[$OPTARG]" ;; q) echo quiet ;; esac
done
