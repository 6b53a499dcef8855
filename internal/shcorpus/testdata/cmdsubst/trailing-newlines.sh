#!/bin/sh
x=$(printf 'text\n\n\n')
printf '[%s]\n' "$x"
y=$(printf '\n\nlead')
printf '[%s]\n' "$y"
