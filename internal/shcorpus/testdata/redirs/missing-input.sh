#!/bin/sh
cat < missing.txt
echo "status $?"
