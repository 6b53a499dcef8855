#!/bin/sh
set -u
echo "${nosuchvar:-default}"
echo "${nosuchvar-}x"
: "${other:=assigned}"
echo "$other"
