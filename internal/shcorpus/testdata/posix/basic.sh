#!/bin/sh
a=1
b="two words"
echo "$a $b"
if [ "$a" -eq 1 ]; then echo one; fi
for x in p q; do echo "$x"; done
