cat <<EOF
$'not ansi-c in heredoc'
EOF
