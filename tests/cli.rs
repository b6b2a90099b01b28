//! The command line as a user runs it: formats, exit codes, bad input.
