"""``python -m harness.lint.rules``: print docs/lint-rules.md's generated part (the rules, from the registry)."""

from harness.lint.docs import generated

print(generated())
