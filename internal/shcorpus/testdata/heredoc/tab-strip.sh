#!/bin/sh
if true; then
	cat <<-EOF
	indented with tabs
		two tabs
	EOF
fi
