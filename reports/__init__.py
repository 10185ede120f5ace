"""Result recording, JSON results, HTML rendering, baseline comparison and the CLI."""
