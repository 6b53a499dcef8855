#!/bin/sh
set -u
echo "${defined:-ok}"
echo "$notdefined"
echo REACHED
