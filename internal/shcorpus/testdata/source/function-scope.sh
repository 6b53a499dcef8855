cat > lib.sh <<'EOF'
local_in_lib=1
f() { local v=inner; echo "$v"; }
EOF
load() { source ./lib.sh; }
load
f
echo "$local_in_lib"
