#!/bin/sh
trap 'echo cleanup' EXIT
echo body
exit 2
