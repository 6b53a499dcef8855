#!/bin/sh
echo hi
x=$((1+2)); echo $x
