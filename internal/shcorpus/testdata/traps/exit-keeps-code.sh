#!/bin/sh
trap 'echo bye' EXIT
exit 3
