#!/bin/sh
set -e
false || echo recovered
false || false
echo REACHED
