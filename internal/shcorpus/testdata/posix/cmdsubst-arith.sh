#!/bin/sh
n=$(echo 5)
echo $((n * 2))
echo "`echo back`"
