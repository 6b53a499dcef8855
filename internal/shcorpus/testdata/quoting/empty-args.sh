f() { echo "$#"; }
f "" ''
f $empty
f "$empty"
f "${arr[@]}"
