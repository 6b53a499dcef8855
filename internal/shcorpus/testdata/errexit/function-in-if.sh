#!/bin/sh
set -e
f() {
  false
  echo "reached: errexit is ignored in an if condition"
  return 3
}
if f; then echo yes; else echo "no: $?"; fi
echo end
