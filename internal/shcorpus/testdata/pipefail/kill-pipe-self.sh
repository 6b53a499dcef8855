# SIGPIPE sent to the shell itself ends it with the default action, even
# though a stage's broken pipe ends only that stage.
bash -c 'kill -PIPE $$; echo survived'
echo "self $?"
bash -c 'kill -s PIPE "$$"; echo survived'
echo "self by name $?"
bash -c 'yes | head -n 1; echo "went on"'
echo "stage $?"
