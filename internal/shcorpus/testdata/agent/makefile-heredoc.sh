cat > Makefile <<'EOF'
.PHONY: build
build:
	go build ./...
test:
	go test ./... -run "$(RUN)"
EOF
grep -c $'^\t' Makefile
head -n 2 Makefile
