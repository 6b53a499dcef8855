#!/bin/sh
p=dir/sub/file.txt
echo "${p##*/} ${p%/*} ${#p} ${unset_v:-def}"
