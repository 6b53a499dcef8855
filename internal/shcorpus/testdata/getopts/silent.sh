set -- -x -b
while getopts ":ab:" o; do
  case $o in
    \?) echo "unknown -$OPTARG" ;;
    :) echo "missing arg for -$OPTARG" ;;
    *) echo "opt $o" ;;
  esac
done
