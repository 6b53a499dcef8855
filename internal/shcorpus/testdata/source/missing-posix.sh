#!/bin/sh
echo start
. ./nope.sh
echo "after: bash continues"
