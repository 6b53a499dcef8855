printf 'id,name\n1,ann\n2,bob\n' > users.csv
{
  read -r header
  while IFS=, read -r id name; do
    echo "$id:$name"
  done
} < users.csv
echo "header=$header"
