"""The `campaign run` command's work: the inputs, its revisions, sessions, cold runs, resumes and rows."""
