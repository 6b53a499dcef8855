	cat <<-'EOF'
		$not_expanded
	EOF
