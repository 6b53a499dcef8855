#!/bin/sh
p=/usr/local/lib/file.tar.gz
echo "${p#*/} | ${p##*/}"
echo "${p%.*} | ${p%%.*}"
echo "${p%/*}"
f=archive.tar.gz
echo "${f%.gz}" "${f#archive.}"
