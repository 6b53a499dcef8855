# The statuses of single-command stages reach PIPESTATUS, pipefail and
# errexit as those of any other stage.
set -o pipefail
false | echo after-false
echo "status $? ${PIPESTATUS[*]}"
true | false | true
echo "status $? ${PIPESTATUS[*]}"
echo x | grep -q x
echo "status $? ${PIPESTATUS[*]}"
shopt -s lastpipe
echo read-me | read v
echo "lastpipe read: $v"
echo gone | { read g; false; }
echo "lastpipe status $? $g"
set -e
trap 'echo "err trap $?"' ERR
echo ok | false || echo "handled"
echo before
echo x | false
echo unreachable
