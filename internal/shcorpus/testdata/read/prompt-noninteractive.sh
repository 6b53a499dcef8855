read -r -p "Name? " name <<< "agent"
echo "name=$name"
