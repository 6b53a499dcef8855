cat > inner.sh <<'EOF'
echo start
false
echo REACHED
EOF
bash -e inner.sh
echo "inner exit $?"
bash inner.sh
echo "inner exit $?"
