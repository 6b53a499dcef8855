(exit 3) | true
echo "status $?"
echo "pipestatus: $(false | true; echo ${PIPESTATUS[@]})"
