set -e
mkdir -p proj
pushd proj > /dev/null
echo '{}' > package.json
popd > /dev/null
ls proj
