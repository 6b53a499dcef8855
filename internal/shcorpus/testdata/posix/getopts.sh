#!/bin/sh
set -- -v -n 3 file
while getopts "vn:" o; do
  case $o in v) echo verbose ;; n) echo "n=$OPTARG" ;; esac
done
shift $((OPTIND - 1))
echo "rest=$*"
