#!/bin/sh
set -e
false && echo not printed
echo "reached: a failing && left side does not exit"
true && false
echo REACHED
