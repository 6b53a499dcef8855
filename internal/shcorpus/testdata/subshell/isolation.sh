#!/bin/sh
x=1
( x=2; echo "inner $x" )
echo "outer $x"
( cd / && pwd )
pwd | sed 's|.*/||' | grep -c .
