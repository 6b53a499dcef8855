#!/bin/sh
f() {
  echo "f got $# args: $*"
  return 3
}
f a b
echo "status $?"
