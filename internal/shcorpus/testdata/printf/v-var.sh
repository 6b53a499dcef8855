printf -v out '%s=%d' count 3
echo "[$out]"
printf -v padded '%05d' 42
echo "$padded"
