#!/bin/sh
for f in x.c y.h z; do
  case "$f" in
    *.c) echo "$f: source" ;;
    *.h) echo "$f: header" ;;
    *) echo "$f: other" ;;
  esac
done
