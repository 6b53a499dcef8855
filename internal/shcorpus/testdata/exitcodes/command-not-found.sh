#!/bin/sh
no-such-command-abc
echo "status $?"
