echo hello > f
exec 4<> f
read -r w <&4
echo "read $w"
exec 4>&-
