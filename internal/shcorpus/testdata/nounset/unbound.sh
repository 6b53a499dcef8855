#!/bin/sh
set -u
echo "before"
echo "$nosuchvar"
echo REACHED
