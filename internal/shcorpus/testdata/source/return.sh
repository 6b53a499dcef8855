cat > lib.sh <<'EOF'
echo in lib
return 4
echo REACHED
EOF
source ./lib.sh
echo "status $?"
