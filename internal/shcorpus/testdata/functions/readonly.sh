readonly R=fixed
R=changed
echo "R=$R"
