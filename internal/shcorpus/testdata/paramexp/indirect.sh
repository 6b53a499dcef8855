target=value
name=target
echo "${!name}"
v1=a v2=b
for n in v1 v2; do echo "${!n}"; done
