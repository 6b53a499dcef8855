#!/bin/sh
echo start
. ./nope.sh
echo REACHED
