set -euo pipefail
versions=(18 20 22)
for v in "${versions[@]}"; do
  echo "::group::node $v"
  echo "testing on node $v"
  echo "::endgroup::"
done
