#!/bin/sh
set -e
echo before
false
echo REACHED
