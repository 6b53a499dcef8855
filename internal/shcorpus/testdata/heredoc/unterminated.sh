echo start
cat <<EOF
body line
  EOF
echo "this is still the here-document"
