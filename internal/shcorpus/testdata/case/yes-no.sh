answer() { case ${1,,} in y|yes) echo yes ;; n|no) echo no ;; *) echo "?" ;; esac; }
answer Y; answer nO; answer maybe
