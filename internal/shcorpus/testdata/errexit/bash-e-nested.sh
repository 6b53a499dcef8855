cat > inner.sh <<'EOF'
echo start
false
echo "after false"
EOF
bash -e inner.sh
echo "inner exit $?"
bash inner.sh
echo "inner exit $?"
