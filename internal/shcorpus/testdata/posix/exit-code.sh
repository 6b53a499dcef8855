#!/bin/sh
(exit 7)
echo "sub $?"
exit 5
