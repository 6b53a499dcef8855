printf 'name=app\nport=80\n# skip\n\nmode=prod\n' > conf
while IFS='=' read -r key value; do
  [[ -z $key || $key == \#* ]] && continue
  echo "$key -> $value"
done < conf
