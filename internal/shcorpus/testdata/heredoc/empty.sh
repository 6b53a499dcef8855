cat <<EOF
EOF
echo "[done]"
