cat <<EOF | tr a-z A-Z | sort
banana
apple
EOF
