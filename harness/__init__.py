"""The Triton Misadventures harness.

Modules, one job each:

- ``spec``        the case contract: metadata fields and their vocabularies
- ``discovery``   finding case folders and loading them
- ``buffers``     inputs and outputs inside guard bands (poison and canaries)
- ``compare``     comparing an output with the reference, fingerprints
- ``interpreter_support``   autotune under the interpreter without a GPU; a NumPy 2.4 fix
- ``worker``      runs one (case, variant, backend) inside its own process
- ``isolate``     starts that process, with a timeout, and reads its result
- ``verdict``     what the kernel did, and whether that is what the case declares
- ``table``       the tables people read, and the JSON machines read
- ``record``      writing a recorded run into a case folder
- ``bench``       timing fixed kernels against PyTorch
- ``scaffold``    ``new``: a case folder from the templates
- ``validate``    ``check``: every problem of a case folder, one line each
- ``detectors``   the checks that could have caught each bug
- ``detect``      ``detect``: which detectors flag a case's kernels
- ``report``      ``report``: the casebook report (Markdown and HTML), with ``plots``
                  (matplotlib pictures) and ``mdhtml`` (Markdown to HTML)
- ``viz_sanitizer``  the optional triton-viz detector
- ``cli``         the command line
"""

__version__ = "0.1.0"
