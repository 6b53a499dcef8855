#!/bin/sh
set -e
ls /nonexistent
echo REACHED
