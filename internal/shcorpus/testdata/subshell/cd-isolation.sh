mkdir sub
(cd sub; touch inside)
ls sub
[ -e inside ] || echo "not in parent"
