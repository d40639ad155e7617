"""The scriptable `workbench` command line."""
