"""Root conftest: registers the conformance plugin (options, devices, verdicts, results)."""

pytest_plugins = ["reports.plugin"]
