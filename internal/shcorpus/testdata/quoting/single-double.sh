x=val
echo 'single $x' "double $x" "nested 'single' $x" 'nested "double"'
echo "escaped \$x \"q\" \\ \`"
