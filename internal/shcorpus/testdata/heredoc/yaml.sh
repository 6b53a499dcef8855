service=web
port=8080
cat > config.yaml <<EOF
services:
  $service:
    image: "nginx:latest"
    ports:
      - "$port:80"
    command: ['sh', '-c', 'echo it''s up']
EOF
cat config.yaml
grep -c ':' config.yaml
