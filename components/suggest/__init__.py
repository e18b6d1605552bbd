"""The Suggestions page's panels: sources, asking a judge, verdicts from a scoring run,
importing a file."""
