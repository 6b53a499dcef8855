s="Hello World"
echo "${s~}" "${s~~}"
arr=(abc DEF gHi)
echo "${arr[@]~}" "${arr[@]~~}"
echo "${s~~[lo]}"
