"""``python -m harness sanitize`` and ``pytest --casebook-sanitize``: a user's own tests and
programs, unchanged, with every Triton launch checked (README, "Check your own tests").

- ``session``        the sanitizer inside the user's process: the instrumented interpreter
                     (``harness.run.interp_instrument``) around each launch, judged launch by launch
- ``fakecuda``       ``device="cuda"`` and ``torch.cuda`` on a machine without a GPU
- ``findings``       the launches' hits folded into findings with the probe's codes and cases
- ``pytest_plugin``  the ``pytest11`` entry point: inert unless ``--casebook-sanitize`` is given;
                     ``plugin_state`` its live half
- ``runner``, ``child``  the command's two processes; ``gpu`` the same on a GPU under
                     compute-sanitizer, a suite in as many processes as lost CUDA contexts take
                     (``gpu_plugin`` tells where each got to), then the interpreter's pass

This module holds names only: the pytest plugin imports it in every pytest run.
"""

RESULTS_ENV = "CASEBOOK_SANITIZE_RESULTS"  # the file a run's hits go to, as JSON lines
JOB_ENV = "CASEBOOK_SANITIZE_JOB"  # the command's child: what to run
PLUGIN = "harness.sanitize.pytest_plugin"
GPU_PLUGIN = "harness.sanitize.gpu_plugin"  # the GPU pass's: where each test got to (``gpu_plugin``)
