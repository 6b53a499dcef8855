mkdir -p x y
pushd x > /dev/null
basename "$PWD"
pushd ../y > /dev/null
basename "$PWD"
popd > /dev/null
basename "$PWD"
popd > /dev/null
