IFS= read -r keep <<< "   spaces   "
echo "[$keep]"
read -r trim <<< "   spaces   "
echo "[$trim]"
