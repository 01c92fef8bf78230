"""``python -m harness.lint.rules``: print docs/lint-rules.md's generated part (the rules, from the registry);
``--cases``: write each case write-up's lint line (the end of its "How to catch it")."""

import sys

from harness.lint.docs import generated

if sys.argv[1:] == ["--cases"]:
    from harness.core import discovery
    from harness.core.fileio import write_text
    from harness.lint.docs import case_block, with_case_block

    for folder in discovery.case_folders():
        readme = folder / "README.md"
        text = readme.read_text(encoding="utf-8")
        new = with_case_block(text, case_block(folder))
        if new != text:
            write_text(readme, new)
            print(f"updated {readme}")
else:
    print(generated())
