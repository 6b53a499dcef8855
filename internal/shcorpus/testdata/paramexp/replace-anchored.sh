files=(src/a.c src/b.c lib/c.c)
printf '%s\n' "${files[@]/#src\//build/}"
printf '%s\n' "${files[@]/%.c/.o}"
v=hello
echo "${v/#/>}" "${v/%/<}" "${v/#h}" "${v/%o}" "${v/#x/y}" "${v/%x/y}"
echo "${v/l/[&]}" "${v//l/(&)}" "${v/l/\&}" "${v/l/'&'}"
path=/usr/local/bin
echo "${path//\//\\}"
q='say "hi"'
echo "${q//\"/\\\"}" ${q//\"/\'}
echo "${v/#*l/X}" "${v/%l*/X}" "${v//[lo]/_}"
set -- aa ab
echo "${@/#a/X}" "${*/%b/Y}"
