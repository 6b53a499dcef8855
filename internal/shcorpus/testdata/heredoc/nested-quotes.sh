msg="He said \"hi\""
cat <<EOF
$msg and 'single' and "double $msg"
EOF
