msg='He said "hi" & left'
json=$(printf '{"msg": "%s"}' "${msg//\"/\\\"}")
echo "$json"
