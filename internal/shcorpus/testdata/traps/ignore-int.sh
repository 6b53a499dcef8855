trap '' INT
kill -INT $$
echo "survived INT"
trap - INT
echo end
