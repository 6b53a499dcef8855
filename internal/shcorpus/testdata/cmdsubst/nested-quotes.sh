echo "$(echo "inner \"quoted\" $(echo deeper)")"
echo "$(echo 'single in subst')"
