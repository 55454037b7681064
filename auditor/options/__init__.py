"""The options of an audit and of a rerun, the ``[tool.auditor]`` configuration, and the policy they make."""
