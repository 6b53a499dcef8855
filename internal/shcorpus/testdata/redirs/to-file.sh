#!/bin/sh
echo one > f
echo two >> f
cat f
: > f
wc -c < f
