#!/bin/sh
echo before
exit 42
