s="héllo"
echo "${#s}"
empty=
echo "${#empty}"
set -- a b c
echo "${#}" "${#@}"
