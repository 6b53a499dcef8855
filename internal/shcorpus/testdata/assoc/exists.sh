declare -A m=([present]=yes [empty]=)
[[ -v m[present] ]] && echo "present is set"
[[ -v m[empty] ]] && echo "empty is set"
[[ -v m[absent] ]] || echo "absent is unset"
echo "${m[absent]:-default}"
