{ echo out; echo err >&2; } |& sort
