#!/bin/sh
set -u
: "${PORT:=8080}"
echo "port=$PORT"
