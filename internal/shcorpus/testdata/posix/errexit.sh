#!/bin/sh
set -e
echo start
false
echo REACHED
