"""What the bench scripts share: their command-line flags and the
environment they run modelstat and ONNX Runtime in."""
import os


def parse_flags(argv, defaults, usage):
    """`--name value` pairs over `defaults` (name -> default value, "_" for
    "-"); each value converted to its default's type (a list default splits
    on commas, a None default keeps the string). Anything else: exit with
    `usage`."""
    values = dict(defaults)
    args = list(argv)
    while args:
        flag = args.pop(0)
        key = flag[2:].replace("-", "_") if flag.startswith("--") else None
        if key not in values or not args:
            raise SystemExit(usage)
        text, default = args.pop(0), values[key]
        if isinstance(default, list):
            values[key] = text.split(",")
        elif default is None or isinstance(default, str):
            values[key] = text
        else:
            values[key] = type(default)(text)
    return values


def clean_env(extra=None):
    """os.environ plus `extra`, without OPENBLAS_CORETYPE: a user's machine
    lets OpenBLAS pick its kernels (these machines force AVX2)."""
    env = dict(os.environ, **(extra or {}))
    env.pop("OPENBLAS_CORETYPE", None)
    return env
