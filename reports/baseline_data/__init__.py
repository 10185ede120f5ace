"""Shipped release baselines: ``torch-<version>.results.json.gz`` (see :mod:`reports.baselines`)."""
