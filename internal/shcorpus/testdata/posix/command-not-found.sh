#!/bin/sh
nonexistent-cmd-posix
echo "status $?"
