printf 'version = "1.0.0"\nname = "x"\n' > Cargo.toml
sed -i 's/^version = ".*"/version = "1.1.0"/' Cargo.toml
cat Cargo.toml
