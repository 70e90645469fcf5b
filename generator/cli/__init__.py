"""The command line: one thin module per command group over one library function each."""
