printf 'content here\n' > f
echo "$(< f)"
