BASE=node:20
cat > Dockerfile <<EOF
FROM $BASE
WORKDIR /app
COPY package*.json ./
RUN npm ci --omit=dev
CMD ["node", "index.js"]
EOF
cat Dockerfile
