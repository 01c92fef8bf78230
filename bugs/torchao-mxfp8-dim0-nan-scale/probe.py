"""Glue for torchao's triton_to_mxfp8_dim0 (MX formats: bf16 to mxfp8, 1 x 32 blocks along each row),
called through torchao's own launcher with its defaults (inner_block_size 32, scaling_mode "rceil").
The module's package imports that the launcher does not need are stubbed: the sub-byte float helpers
(unused by mxfp8) and the scale-mode enum; torchao.utils' device checks are copied as they are, so
the module decides, as it does for a user, where its Triton kernels are available: on CUDA devices of
compute capability 10.0 or more with CUDA 12.8 (its "rceil" scale is one PTX instruction of sm_100,
cvt.rp.satfinite.ue8m0x2.f32) and on AMD MI350; elsewhere the launcher raises."""

import enum

import torch

from harness.bugs.source import load


class _ScaleCalculationMode(enum.Enum):
    FLOOR = "floor"
    RCEIL = "rceil"
    CEIL = "ceil"
    EVEN = "even"


def _is_rocm():
    return torch.cuda.is_available() and torch.version.hip is not None


def _is_mi350():
    return _is_rocm() and "gfx950" in torch.cuda.get_device_properties(0).gcnArchName


def _is_sm_at_least_100():
    return bool(torch.cuda.is_available() and torch.version.cuda and torch.cuda.get_device_capability() >= (10, 0))


def _is_cuda_version_at_least(major, minor):
    if not torch.cuda.is_available() or torch.version.cuda is None:
        return False
    return tuple(map(int, torch.version.cuda.split(".")[:2])) >= (major, minor)


def _torch_version_at_least(v):
    from packaging.version import parse

    return parse(torch.__version__) >= parse(v)


def _unused(*a, **k):
    raise NotImplementedError("sub-byte float helpers: not used by mxfp8")


STUBS = {
    "torchao.prototype.custom_fp_utils": {"_f32_to_floatx_unpacked": _unused, "_floatx_unpacked_to_f32": _unused},
    "torchao.prototype.mx_formats.config": {"ScaleCalculationMode": _ScaleCalculationMode},
    "torchao.utils": {"is_cuda_version_at_least": _is_cuda_version_at_least, "is_MI350": _is_mi350,
                      "is_ROCM": _is_rocm, "is_sm_at_least_100": _is_sm_at_least_100,
                      "torch_version_at_least": _torch_version_at_least,
                      "is_mslk_version_at_least": lambda v: False},
}


def _run(variant, x):
    mod = load(__file__, variant, stubs=STUBS)
    data, scale = mod.triton_to_mxfp8_dim0(x)
    # the e8m0 scales (255 is NaN) and the fp8 values as float32 (NaN where a block held one)
    return scale.view(torch.uint8).to(torch.int32), data.to(torch.float32)


def launch_buggy(x):
    return _run("buggy", x)


def launch_fixed(x):
    return _run("fixed", x)


def make_inputs(*, device, gen, rows=128, cols=256, nan_blocks=0):
    """bf16 activations as torchao's test_kernels.py makes them (randn, rows x cols with cols a multiple
    of 32); ``nan_blocks`` of its 1 x 32 blocks hold one NaN each."""
    x = torch.randn(rows, cols, generator=gen)
    blocks = torch.randperm(rows * (cols // 32), generator=gen)[:nan_blocks]
    for blk in blocks.tolist():
        r, c = divmod(blk, cols // 32)
        x[r, c * 32 + int(torch.randint(0, 32, (1,), generator=gen))] = float("nan")
    return {"x": x.to(torch.bfloat16).to(device)}


def reference(x):
    """torchao's own torch reference for "rceil" (to_mx): per 1 x 32 block, the e8m0 exponent
    ceil(log2(amax / 448)) + 127 (clamped to 0..254), 255 for a block with a NaN; the values scaled
    by 2**-(exponent - 127) and rounded to float8_e4m3fn, NaN in a NaN block's NaN lanes."""
    x = x.double().cpu()
    rows, cols = x.shape
    blocks = x.view(rows, cols // 32, 32)
    nan = blocks.isnan().any(dim=2)
    amax = blocks.abs().nan_to_num(0.0).amax(dim=2)
    e = torch.ceil(torch.log2(amax / 448.0)).clamp(-127, 127)
    e = torch.where(amax == 0, torch.full_like(e, -127), e)
    biased = torch.where(nan, torch.full_like(e, 255), e + 127)
    scaled = blocks * torch.pow(2.0, -e)[..., None]
    data = scaled.to(torch.float32).to(torch.float8_e4m3fn).to(torch.float64).view(rows, cols)
    return biased.to(torch.int64), data


FUZZ = {"rows": (1, 256), "cols": (32, 512)}
