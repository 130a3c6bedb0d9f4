"""Reports on results folders: terminal (console), JUnit, Markdown, HTML and JSON."""
