#!/bin/sh
printf 'one\ntwo\n' > f
while read -r l; do echo "[$l]"; done < f
