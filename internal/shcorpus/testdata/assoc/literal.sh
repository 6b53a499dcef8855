declare -A color=([apple]=red [banana]=yellow ["key with space"]=value)
echo "${color[apple]}"
echo "${color[key with space]}"
for k in $(printf '%s\n' "${!color[@]}" | sort); do echo "$k"; done
