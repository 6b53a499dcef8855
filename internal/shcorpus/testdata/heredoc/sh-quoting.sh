#!/bin/sh
v='quoted "value" with $dollar'
cat <<EOF
[$v]
['single' "double"]
EOF
