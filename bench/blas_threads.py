"""Thread count for Debian's LibTorch, both pools.

Debian's torch hands fp32 GEMM (and so im2col convolutions, Linear, MatMul) to
OpenBLAS, whose pthread pool ignores torch.set_num_threads. modelstat's
--threads sets both (profiler/run_context.cc); a PyTorch reference must too, or
its "1 thread" runs use one OpenMP thread and every core in BLAS.
"""
import ctypes


def openblas():
    """The OpenBLAS already loaded by torch (same soname -> same instance), or None."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_num_threads()
        return lib
    except (OSError, AttributeError):
        return None


def set_threads(torch, threads):
    """torch.set_num_threads and OpenBLAS's pool; returns the BLAS count (None without OpenBLAS)."""
    torch.set_num_threads(threads)
    lib = openblas()
    if lib is None:
        return None
    lib.openblas_set_num_threads(threads)
    return lib.openblas_get_num_threads()
