source <(echo 'greeting=hello-from-source')
echo "$greeting"
