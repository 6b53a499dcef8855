#!/bin/sh
set -e
trap 'echo "exit trap, status $?"' EXIT
echo start
false
echo REACHED
