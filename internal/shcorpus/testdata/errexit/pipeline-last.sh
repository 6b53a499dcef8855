#!/bin/sh
set -e
false | true
echo "reached: only the last command counts"
true | false
echo REACHED
