"""``check``'s validator: small named rules over a read-only view of one case folder.

- ``problem``   Violation (what a rule reports), Problem (a printed line), ERROR/WARNING, ``shown``
- ``folder``    CaseFolder: one folder, each file read and parsed once
- ``readme``    the write-up, parsed once through ``harness.core.markdown``
- ``registry``  Rule, ``@rule``, the families and what a rule may need
- ``rules/``    the rules, one module per family (docs/check-rules.md is their table); case.toml's
                fields are checked by the contract's one validator, ``harness.core.spec.validate``
- ``engine``    ``check_folders``: read, run under the interpreter, apply every rule

Nothing here imports torch or triton; the interpreter run imports the scheduler
only when there is a case to run.
"""
