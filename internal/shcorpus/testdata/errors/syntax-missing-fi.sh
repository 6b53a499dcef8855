#!/bin/sh
echo one
if true; then
  echo two
