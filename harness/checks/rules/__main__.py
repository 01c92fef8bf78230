"""``python -m harness.checks.rules``: print the rule table that docs/check-rules.md holds."""

from harness.checks.rules import table

print(table())
