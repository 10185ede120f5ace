"""The conformance suite: property tests per area, the claim registry
(``claims/*.toml``) and the known deviations (``expectations.toml``)."""
