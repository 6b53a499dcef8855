echo "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}" "${BASH_VERSION%%(*}" "$OSTYPE"
[[ ${BASH_VERSINFO[0]} -ge 4 ]] && echo "associative arrays available"
declare -p BASH_VERSION
