"""The `measure` command's work: phases timed, the environment recorded, the memory estimated."""
