s="hello World"
echo "${s^} ${s^^} ${s,} ${s,,}"
echo "${s~~}"
