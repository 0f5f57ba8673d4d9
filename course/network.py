"""Networks as the spec card writes them: a list of layers, built into ``torch.nn``, and a table of shapes.

Build a network from layer builders whose missing sizes are inferred from the input shape::

    net = build([conv(8, kernel_size=3, padding=1), relu(), avg_pool(2)], input_shape=("B", 3, 16, 16))
    print_summary(net, ("B", 3, 16, 16))

prints exactly the card's table::

    Network: [B, 3, 16, 16] -> [B, 8, 8, 8]  dtype=float32
    index  name  operation  input shapes      output shapes
    0      n0    conv       x=[B, 3, 16, 16]  out=[B, 8, 16, 16]
    1      n1    relu       x=[B, 8, 16, 16]  out=[B, 8, 16, 16]
    2      n2    avg_pool   x=[B, 8, 16, 16]  out=[B, 8, 8, 8]

    Parameters: 224

:func:`summary` works for any ``nn.Sequential`` of common layers too. A shape that does not fit (a window
larger than the map, too much padding, a linear layer of the wrong width) raises a ``ValueError`` that
names the layer, e.g. ``layer 2 (n2, avg_pool): ...``.

The two helpers at the end (:func:`module_output`, :func:`module_parameters`) let graded tests look at a
student's ``nn.Module`` class with plain data only; they solve nothing.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch
from torch import nn

from course.checks import runs_with_student_code

__all__ = [
    "Layer",
    "conv",
    "relu",
    "avg_pool",
    "max_pool",
    "global_avg_pool",
    "flatten",
    "linear",
    "build",
    "summary",
    "print_summary",
    "shape_table",
    "parameter_total",
    "module_output",
    "module_parameters",
]

Shape = Sequence[Any]  # ("B", C, H, W): the batch entry is symbolic ("B") or an int


# --------------------------------------------------------------------------------------------------
# Layer builders: descriptions, turned into modules by build() once the input shape is known.


@dataclass(frozen=True)
class Layer:
    """One layer of a network description: the card's ``operation`` name and its arguments.

    ``repr`` reads as the card writes it, e.g. ``conv(8, kernel_size=3, padding=1)``.
    """

    operation: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.operation}({', '.join(parts)})"


def _given(**kwargs) -> dict:
    """Only the keyword arguments that differ from their defaults (for a short, card-like repr)."""
    return {k: v for k, (v, default) in kwargs.items() if v != default}


def conv(out_channels: int, kernel_size, stride=1, padding=0) -> Layer:
    """A 2-D convolution ``[B, C, H, W] -> [B, out_channels, H_out, W_out]``; ``in_channels`` = C of its input."""
    return Layer("conv", (out_channels,), _given(kernel_size=(kernel_size, None), stride=(stride, 1),
                                                 padding=(padding, 0)))


def relu() -> Layer:
    """Element-wise ``max(x, 0)``; any shape passes through."""
    return Layer("relu")


def avg_pool(kernel_size, stride=0, padding=0, count_include_pad: bool = True) -> Layer:
    """2-D average pooling ``[B, C, H, W] -> [B, C, H_out, W_out]``; stride 0 means kernel_size."""
    return Layer("avg_pool", (kernel_size,), _given(stride=(stride, 0), padding=(padding, 0),
                                                    count_include_pad=(count_include_pad, True)))


def max_pool(kernel_size, stride=0, padding=0) -> Layer:
    """2-D max pooling ``[B, C, H, W] -> [B, C, H_out, W_out]``; stride 0 means kernel_size."""
    return Layer("max_pool", (kernel_size,), _given(stride=(stride, 0), padding=(padding, 0)))


def global_avg_pool() -> Layer:
    """Global average pooling ``[B, C, H, W] -> [B, C, 1, 1]`` (``nn.AdaptiveAvgPool2d(1)``)."""
    return Layer("global_avg_pool")


def flatten() -> Layer:
    """``[B, d1, d2, ...] -> [B, d1*d2*...]``."""
    return Layer("flatten")


def linear(out_features: int | None = None, in_features: int | None = None) -> Layer:
    """A dense layer ``[B, in_features] -> [B, out_features]``.

    ``in_features`` defaults to the width of its input; ``out_features`` may be left out on the last
    layer only, where :func:`build` takes it from ``output_shape``.
    """
    return Layer("linear", () if out_features is None else (out_features,),
                 _given(in_features=(in_features, None)))


# --------------------------------------------------------------------------------------------------
# Shapes and rules.


def _check_input_shape(shape: Shape, name: str = "input_shape") -> tuple:
    if not isinstance(shape, (tuple, list)) or len(shape) < 2:
        raise ValueError(f"{name} must be a tuple (B, ...) of at least two entries, got {shape!r}")
    batch, *rest = shape
    if not (batch == "B" or (isinstance(batch, int) and not isinstance(batch, bool) and batch >= 1)):
        raise ValueError(f"{name}[0] is the batch: 'B' or an int >= 1, got {batch!r}")
    for i, size in enumerate(rest, start=1):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"{name}[{i}] must be an int >= 1, got {size!r} in {shape!r}")
    return ("B", *rest)


def _format_shape(shape: Sequence) -> str:
    """``[B, 3, 16, 16]``: the batch axis always printed as the symbol B."""
    return "[" + ", ".join(["B"] + [str(int(s)) for s in list(shape)[1:]]) + "]"


def _operation(module: nn.Module) -> str:
    """The card's operation name of a module: conv, relu, avg_pool, ... (else the class name in snake_case)."""
    if isinstance(module, nn.AdaptiveAvgPool2d):
        size = module.output_size
        return "global_avg_pool" if size in (1, (1, 1)) else "adaptive_avg_pool"
    known = {
        nn.Conv2d: "conv", nn.ReLU: "relu", nn.AvgPool2d: "avg_pool", nn.MaxPool2d: "max_pool",
        nn.AdaptiveMaxPool2d: "adaptive_max_pool", nn.Flatten: "flatten", nn.Linear: "linear",
        nn.BatchNorm2d: "batch_norm", nn.BatchNorm1d: "batch_norm", nn.Dropout: "dropout",
        nn.Dropout2d: "dropout", nn.Identity: "identity", nn.Sigmoid: "sigmoid", nn.Tanh: "tanh",
        nn.Softmax: "softmax", nn.LogSoftmax: "log_softmax", nn.GELU: "gelu", nn.LeakyReLU: "leaky_relu",
    }
    for kind, name in known.items():
        if type(module) is kind:
            return name
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(module).__name__).lower()


def _need_4d(shape: tuple, where: str) -> tuple[int, int, int]:
    if len(shape) != 4:
        raise ValueError(f"{where}: expects an image batch [B, C, H, W], got {_format_shape(shape)}")
    return shape[1], shape[2], shape[3]


def _stride_or_kernel(kernel, stride):
    """The card's ``stride=0`` (the kernel size), per axis, in the form PyTorch takes; PyTorch checks the
    values themselves."""
    if isinstance(stride, (tuple, list)):
        kernels = kernel if isinstance(kernel, (tuple, list)) else (kernel,) * len(stride)
        return tuple(k if s == 0 else s for k, s in zip(kernels, stride))
    return kernel if stride == 0 else stride


def _refused(exc: Exception, where: str) -> Exception:
    """PyTorch's refusal ``exc`` as the course's error: a TypeError stays one, anything else becomes a
    ValueError; the message is ``where`` (the layer) and the first line of PyTorch's."""
    kind = TypeError if isinstance(exc, TypeError) else ValueError
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return kind(f"{where}: {first}")


def _run(module: nn.Module, x: torch.Tensor, where: str) -> torch.Tensor:
    """``module(x)``, where an input PyTorch refuses (a window larger than the map, too much padding, a
    kernel size that is not an int) raises PyTorch's own message, prefixed with the layer's name."""
    try:
        return module(x)
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise _refused(exc, f"{where}: cannot take an input {_format_shape(x.shape)}") from exc


def _check_pool_rules(kernel_size, padding, size: tuple, shape: tuple, where: str) -> None:
    """The spec card's rules of a pooling window, in its words (issue 53: never PyTorch's "effective kernel size
    ... dilation"): padding at most kernel_size // 2 per axis, and a window that fits the padded map."""
    kernel = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
    pad = padding if isinstance(padding, (tuple, list)) else (padding, padding)
    if any(type(v) is not int for v in (*kernel, *pad, *size)):
        return  # a symbolic size or an odd argument: PyTorch's own check says what is wrong
    for k, p, n in zip(kernel, pad, size):
        if p > k // 2:
            raise ValueError(f"{where}: padding must be at most kernel_size // 2 = {k // 2} on each axis, got "
                             f"padding={padding!r} with kernel_size={kernel_size!r}")
        if n + 2 * p < k:
            raise ValueError(f"{where}: cannot take an input {_format_shape(shape)}: its map plus padding "
                             f"{padding!r} on each side is smaller than kernel_size {kernel_size!r}: no window fits")


def _check_rules(module: nn.Module, shape: tuple, where: str) -> None:
    """Raise a ValueError naming the layer where ``module`` cannot take an input of ``shape``."""
    if isinstance(module, nn.Conv2d):
        channels, _, _ = _need_4d(shape, where)
        if module.in_channels != channels:
            raise ValueError(f"{where}: in_channels = {module.in_channels} does not match the input's "
                             f"{channels} channels ({_format_shape(shape)})")
    elif isinstance(module, (nn.AvgPool2d, nn.MaxPool2d)):
        _, height, width = _need_4d(shape, where)
        if getattr(module, "dilation", 1) not in (1, (1, 1)):
            raise ValueError(f"{where}: dilated pooling is not supported by the summary")
        _check_pool_rules(module.kernel_size, module.padding, (height, width), shape, where)
    elif isinstance(module, (nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d)):
        _need_4d(shape, where)
    elif isinstance(module, nn.Linear):
        if shape[-1] != module.in_features:
            raise ValueError(f"{where}: in_features = {module.in_features} does not match the width "
                             f"{shape[-1]} of its input {_format_shape(shape)} (flatten first?)")
    elif isinstance(module, nn.BatchNorm2d):
        channels, _, _ = _need_4d(shape, where)
        if module.num_features != channels:
            raise ValueError(f"{where}: num_features = {module.num_features} does not match the input's "
                             f"{channels} channels")


def _leaves(network: nn.Module, prefix: str = "") -> list[tuple[str, nn.Module]]:
    """The rows of the table: children of a Sequential, nested Sequentials expanded (dotted names)."""
    if not isinstance(network, nn.Sequential):
        raise TypeError(f"network must be an nn.Sequential, got {type(network).__name__}")
    rows = []
    for name, child in network.named_children():
        full = f"{prefix}{name}"
        if isinstance(child, nn.Sequential):
            rows += _leaves(child, full + ".")
        else:
            rows.append((f"n{full}" if full[:1].isdigit() else full, child))
    return rows


def _device_of(network: nn.Module) -> torch.device:
    for tensor in list(network.parameters()) + list(network.buffers()):
        return tensor.device
    return torch.device("cpu")


@torch.no_grad()
def _trace(rows: list[tuple[str, nn.Module]], input_shape: tuple, dtype: torch.dtype,
           device: torch.device) -> list[tuple[str, str, tuple, tuple]]:
    """Run a zero batch of one through each row; returns (name, operation, in shape, out shape) per row."""
    x = torch.zeros((1, *input_shape[1:]), dtype=dtype, device=device)
    table = []
    for index, (name, module) in enumerate(rows):
        operation = _operation(module)
        where = f"layer {index} ({name}, {operation})"
        shape_in = tuple(x.shape)
        _check_rules(module, shape_in, where)
        was_training = module.training
        module.eval()  # batch statistics of one zero image are meaningless; eval mode gives the same shape
        try:
            x = _run(module, x, where)
        finally:
            module.train(was_training)
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{where}: returned {type(x).__name__}, not a tensor")
        table.append((name, operation, shape_in, tuple(x.shape)))
    return table


def parameter_total(network: nn.Module) -> int:
    """``sum(p.numel() for p in network.parameters())``: every parameter, trainable or not."""
    return int(sum(p.numel() for p in network.parameters()))


def shape_table(network: nn.Sequential, input_shape: Shape, dtype: torch.dtype = torch.float32
                ) -> list[dict]:
    """One dict per layer: ``index``, ``name``, ``operation``, ``input`` and ``output`` shapes (batch as 'B')."""
    shape = _check_input_shape(input_shape)
    rows = _trace(_leaves(network), shape, dtype, _device_of(network))
    return [{"index": i, "name": name, "operation": op, "input": ("B", *s_in[1:]), "output": ("B", *s_out[1:])}
            for i, (name, op, s_in, s_out) in enumerate(rows)]


def summary(network: nn.Sequential, input_shape: Shape, dtype: torch.dtype = torch.float32) -> str:
    """The card's table of ``network`` for an input ``[B, ...]`` of ``dtype``, as one string.

    ``Network: [B, ...] -> [B, ...]  dtype=...``, then one aligned row per layer (index, name,
    operation, input shapes, output shapes), a blank line and ``Parameters: N``.
    """
    rows = shape_table(network, input_shape, dtype)
    header = ["index", "name", "operation", "input shapes", "output shapes"]
    cells = [[str(r["index"]), r["name"], r["operation"], f"x={_format_shape(r['input'])}",
              f"out={_format_shape(r['output'])}"] for r in rows]
    widths = [max(len(line[c]) for line in [header] + cells) for c in range(len(header))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip()
             for line in [header] + cells]
    shape_in = _check_input_shape(input_shape)
    shape_out = rows[-1]["output"] if rows else shape_in
    dtype_name = str(dtype).replace("torch.", "")
    first = f"Network: {_format_shape(shape_in)} -> {_format_shape(shape_out)}  dtype={dtype_name}"
    return "\n".join([first, *lines, "", f"Parameters: {parameter_total(network)}"])


def print_summary(network: nn.Sequential, input_shape: Shape, dtype: torch.dtype = torch.float32) -> None:
    """Print :func:`summary` (to standard output)."""
    print(summary(network, input_shape, dtype))


# --------------------------------------------------------------------------------------------------
# build(): layer descriptions -> nn.Sequential with sizes inferred.


def _module_for(layer: Layer, shape: tuple, where: str, last: bool, output_shape) -> nn.Module:
    kw = dict(layer.kwargs)
    op = layer.operation
    if op == "conv":
        channels, _, _ = _need_4d(shape, where)
        (out_channels,) = layer.args
        if not isinstance(out_channels, int) or out_channels < 1:
            raise ValueError(f"{where}: out_channels must be an int >= 1, got {out_channels!r}")
        module = nn.Conv2d(channels, out_channels, kw["kernel_size"], stride=kw.get("stride", 1),
                           padding=kw.get("padding", 0))
    elif op == "relu":
        module = nn.ReLU()
    elif op in ("avg_pool", "max_pool"):
        _need_4d(shape, where)
        (kernel,) = layer.args
        stride = _stride_or_kernel(kernel, kw.get("stride", 0))
        if op == "avg_pool":
            module = nn.AvgPool2d(kernel, stride, kw.get("padding", 0),
                                  count_include_pad=kw.get("count_include_pad", True))
        else:
            module = nn.MaxPool2d(kernel, stride, kw.get("padding", 0))
    elif op == "global_avg_pool":
        _need_4d(shape, where)
        module = nn.AdaptiveAvgPool2d(1)
    elif op == "flatten":
        module = nn.Flatten()
    elif op == "linear":
        if len(shape) != 2:
            raise ValueError(f"{where}: expects [B, features], got {_format_shape(shape)} (flatten first?)")
        in_features = kw.get("in_features", shape[-1])
        if layer.args:
            (out_features,) = layer.args
        elif last and output_shape is not None:
            out_features = output_shape[-1]
        elif last:
            raise ValueError(f"{where}: out_features is missing; give it, or give build() an output_shape")
        else:
            raise ValueError(f"{where}: out_features is required (only the last layer may take it "
                             "from output_shape)")
        if not isinstance(out_features, int) or out_features < 1:
            raise ValueError(f"{where}: out_features must be an int >= 1, got {out_features!r}")
        module = nn.Linear(in_features, out_features)
    else:
        raise ValueError(f"{where}: unknown operation {op!r}")
    return module


def build(layers: Sequence[Layer], input_shape: Shape, output_shape: Shape | None = None,
          dtype: torch.dtype = torch.float32, seed: int = 0) -> nn.Sequential:
    """An ``nn.Sequential`` (children ``n0, n1, ...``) from layer builders, sizes inferred from ``input_shape``.

    A last ``linear()`` without a size takes it from ``output_shape``; the network's output must then
    have that shape. Parameters are initialised from ``torch.manual_seed(seed)`` without touching the
    global random state, so the same call gives the same network.
    """
    shape = _check_input_shape(input_shape)
    if output_shape is not None:
        output_shape = _check_input_shape(output_shape, "output_shape")
    if not isinstance(layers, (list, tuple)) or not all(isinstance(layer, Layer) for layer in layers):
        raise TypeError("layers must be a list of layer builders, e.g. [conv(8, kernel_size=3), relu()]")
    modules: "OrderedDict[str, nn.Module]" = OrderedDict()
    x = torch.zeros((1, *shape[1:]), dtype=dtype)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        for index, layer in enumerate(layers):
            where = f"layer {index} (n{index}, {layer.operation})"
            try:
                module = _module_for(layer, tuple(x.shape), where, index == len(layers) - 1, output_shape)
            except (TypeError, RuntimeError) as exc:  # PyTorch refused the arguments themselves
                raise _refused(exc, where) from exc
            module = module.to(dtype)
            _check_rules(module, tuple(x.shape), where)
            x = _run(module, x, where)
            modules[f"n{index}"] = module
    if output_shape is not None and tuple(x.shape[1:]) != tuple(output_shape[1:]):
        raise ValueError(f"output_shape {_format_shape(output_shape)} does not match the network's output "
                         f"{_format_shape(x.shape)}")
    return nn.Sequential(modules)


# --------------------------------------------------------------------------------------------------
# Looking at a student's nn.Module class with plain data (graded tests).


@runs_with_student_code
def module_output(module_class, init_args: Sequence, x: torch.Tensor, seed: int = 0,
                  weights: dict | None = None) -> torch.Tensor:
    """``module_class(*init_args)`` made after ``torch.manual_seed(seed)``, with ``weights`` (``{name: tensor}``,
    every parameter, e.g. ``fc.weight [K, C]`` and ``fc.bias [K]``) loaded into it when given, applied to
    ``x``; the output, detached. The caller picks the weights, so the expected output never depends on
    the module's own state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = module_class(*init_args)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{getattr(module_class, '__name__', module_class)} must be an nn.Module subclass")
    if weights is not None:
        own = dict(module.named_parameters())
        if sorted(own) != sorted(weights):
            raise AssertionError(f"the module's parameters are {sorted(own)}, expected {sorted(weights)}")
        with torch.no_grad():
            for name, value in weights.items():
                if tuple(own[name].shape) != tuple(value.shape):
                    raise AssertionError(f"parameter {name} has shape {tuple(own[name].shape)}, expected "
                                         f"{tuple(value.shape)}")
                own[name].copy_(value)
    with torch.no_grad():
        out = module(x)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"forward must return a tensor, got {type(out).__name__}")
    return out.detach().clone().as_subclass(torch.Tensor)


@runs_with_student_code
def module_parameters(module_class, init_args: Sequence, seed: int = 0) -> dict:
    """``{name: tensor}`` of ``module_class(*init_args)`` made after ``torch.manual_seed(seed)`` (detached copies)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = module_class(*init_args)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{getattr(module_class, '__name__', module_class)} must be an nn.Module subclass")
    return {name: p.detach().clone() for name, p in module.named_parameters()}
