#!/bin/sh
echo start
if then
echo REACHED
