while IFS=: read -r k v; do
  echo "key=$k value=$v"
done <<EOF
name:alice
role:admin
EOF
