"""The Triton Misadventures harness.

Modules, one job each:

- ``spec``        the case contract: metadata fields and their vocabularies
- ``discovery``   finding case folders and loading them
- ``buffers``     inputs and outputs inside guard bands (poison and canaries)
- ``compare``     comparing an output with the reference, fingerprints
- ``interpreter_support``   a CPU benchmarker so ``@triton.autotune`` runs under the interpreter
- ``worker``      runs one (case, variant, backend) inside its own process
- ``isolate``     starts that process, with a timeout, and reads its result
- ``verdict``     what the kernel did, and whether that is what the case declares
- ``table``       the tables people read, and the JSON machines read
- ``record``      writing a recorded run into a case folder
- ``bench``       timing fixed kernels against PyTorch
- ``cli``         the command line
"""

__version__ = "0.1.0"
