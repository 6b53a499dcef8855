#!/bin/sh
mkdir -p d && (cd d && touch f) && ls d
