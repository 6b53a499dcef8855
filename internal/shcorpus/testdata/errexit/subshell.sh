#!/bin/sh
set -e
(false; echo REACHED in subshell)
echo REACHED after subshell
