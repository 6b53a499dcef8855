#!/bin/sh
v=set
echo "${v:?never}"
echo "${missing:?is required}"
echo REACHED
