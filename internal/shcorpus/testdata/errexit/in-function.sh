#!/bin/sh
set -e
f() {
  echo in f
  false
  echo REACHED in f
}
f
echo REACHED after f
