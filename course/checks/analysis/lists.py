"""The lists the source rules read: decorators and built-ins the resolver understands, what hides what code
calls, what the grader cannot read, and lesson 4's allow-list :data:`TENSOR_ARITHMETIC`; with the sentences
the refusals end with."""

from __future__ import annotations

import builtins


#: Decorators that leave a ``def`` what it is (by resolved path; ``<property>.setter`` is understood too).
KNOWN_DECORATORS = {"staticmethod", "classmethod", "property", "torch.autograd.function.once_differentiable",
                    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "functools.wraps",
                    "functools.cache", "functools.lru_cache"}
#: Built-ins whose result carries none of their arguments (a number, a string, a bool, None, a range).
DATA_BUILTINS = {"isinstance", "issubclass", "len", "print", "str", "repr", "int", "float", "bool", "complex",
                 "abs", "round", "range", "hash", "id", "format", "divmod", "pow", "any", "all", "ord",
                 "chr", "hex", "bin", "oct", "callable", "ascii"}
#: Library callees whose result is plain data, by resolved dotted path (``*`` matches one whole part): a tensor,
#: an array, a number, a string, a random generator, or a container of those. The result of any other call
#: (``copy.copy(F)``, ``functools.reduce(...)``, a call's result) is of unknown kind: it may be a function,
#: class or module, so calling it, or an attribute of it other than :data:`DATA_METHODS`, is refused.
RETURNS = {"numpy.*": "array", "numpy.lib.stride_tricks.*": "array", "numpy.linalg.*": "array",
           "numpy.random.*": "generator or array", "numpy.add.*": "array", "torch.*": "tensor",
           "torch.nn.functional.*": "tensor", "torch.linalg.*": "tensor", "torch.Tensor.*": "tensor",
           "math.*": "number", "operator.index": "number", "operator.add": "number", "operator.mul": "number",
           "numbers.*": "number", "itertools.product": "container", "itertools.accumulate": "container",
           "itertools.chain": "container", "itertools.repeat": "container", "itertools.count": "container"}
#: Callees that return a function or what they were given, never data: not in :data:`RETURNS` even where a
#: pattern there covers them.
NOT_DATA = {"numpy.vectorize", "numpy.frompyfunc", "torch.vmap", "torch.compile", "torch.jit", "torch.no_grad",
            "torch.enable_grad", "torch.autograd", "torch.func", "torch.library", "torch.ops", "torch.overrides"}
#: Attributes a value of unknown kind may still be called through: the methods of tensors, arrays and
#: Python's containers, strings and numbers (filled in by the resolver from those types).
DATA_TYPES_FOR_METHODS = ("torch.Tensor", "numpy.ndarray", "list", "dict", "str", "tuple", "set", "int", "float")
#: Calls that look a function up from a string, as ``getattr`` with a computed name does.
NAME_LOOKUPS = {"operator.attrgetter", "operator.methodcaller", "pydoc.locate", "pkgutil.resolve_name",
                "torch._C._jit_get_operation", "torch.overrides.get_overridable_functions",
                "torch.overrides.get_testing_overrides", "torch.overrides.get_ignored_functions"}
_BUILTIN_NAMES = set(dir(builtins)) | {"display", "get_ipython", "__class__", "__name__"}
UNKNOWN = "a name that is neither defined in your solution cells, imported, nor given by the set-up"
INSTEAD = ("call functions and classes directly by their module name (torch.zeros, F.pad, x.sum, np.cumsum) "
           "or your own def by its name")


#: What an exercise's code may not do, because it would hide from a reader (and from the grader) what
#: the code calls: run code built from strings, reach into interpreter internals, or work elsewhere.
DYNAMIC_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "setattr", "delattr",
                 "breakpoint", "memoryview"}
INTERNAL_MODULES = {"importlib", "ctypes", "gc", "inspect", "threading", "_thread", "multiprocessing",
                    "subprocess", "os", "signal", "builtins", "types", "marshal", "pickle", "concurrent",
                    "code", "codeop", "runpy", "pty", "socket", "asyncio", "shutil", "dis", "weakref"}
#: ``sys`` is fine for printing (``sys.stderr``); these parts of it reach the interpreter's machinery.
#: Library calls that look functions and classes up from a string, by their name (attribute or function) or
#: keyword: ``string.Formatter().get_field("0.nn.Linear", ...)``, ``logging.config``'s resolvers,
#: ``typing.get_type_hints`` of a string annotation, ``np.load``/``torch.load`` of pickled objects.
LOOKUP_NAMES = {"get_field", "get_type_hints", "ForwardRef", "BaseConfigurator", "DictConfigurator", "dictConfig",
                "fileConfig"}  # (pydoc.locate, pkgutil.resolve_name: NAME_LOOKUPS, by path: a helper may be `locate`)
LOOKUP_KEYWORDS = {"allow_pickle": False, "weights_only": True}  # keyword: the only value allowed
SYS_INTERNALS = {"modules", "settrace", "setprofile", "gettrace", "getprofile", "_getframe", "meta_path",
                 "path_hooks", "path_importer_cache", "addaudithook", "_current_frames", "setrecursionlimit"}
ALLOWED_DUNDERS = {"__name__", "__qualname__", "__init__", "__doc__", "__class__"}
ALLOWED_TENSOR_TEXT = ("strided slices and +=, F.pad, x.unfold, F.unfold/F.fold, x.cumsum, x.sum, "
                       "x.new_zeros, torch.arange, reshape/view/permute, einsum, and your own helper functions")
ALLOWED_TEXT = ("allowed: NumPy and PyTorch operations, plain attribute access (np.sum, x.shape), Python's "
                "built-ins such as range, len, min, max, isinstance, and your own helper functions")


#: What an exercise's code may not call because what it runs is not code the grader can read: the course's
#: own helpers (for the notebook; some compute what the exercises ask: course.network builds PyTorch's
#: pooling layers from a string), and code compiled from text or loaded from elsewhere. Path prefix -> why.
UNREADABLE_PATHS = {
    "course": "the course's own helpers are for the notebook (some compute what the exercises ask)",
    "torch.jit": "TorchScript compiles code from text", "torch.fx": "torch.fx rewrites and generates code",
    "torch.compile": "torch.compile generates code", "torch._dynamo": "torch.compile generates code",
    "torch.library": "torch.library defines operators from text", "torch.ops.load_library": "it loads compiled code",
    "torch.utils.cpp_extension": "it compiles C++ from text", "torch.hub": "it loads code from elsewhere",
}


#: Lesson 4's rule "tensor operations only" as an allow-list (``check_avoids(..., allowed=TENSOR_ARITHMETIC)``):
#: the library functions and classes its code may use, by resolved dotted path (named, never a ``module.*``
#: pattern; none whose implementation evaluates text: ``tests/course/test_resolver.py`` walks them), and, as ``.name``, the
#: attributes it may read or call on its values (``x.unfold``, ``ctx.saved_tensors``; ``torch.Tensor.unfold``
#: too). Enough for every honest way to pool with shifted slices, ``F.pad``, ``x.unfold``/``F.unfold``/``F.fold``,
#: prefix sums or ``einsum``; never a pooling, convolution or resampling function. The code's own
#: functions, classes and the attributes it sets are its own; built-in exceptions are always allowed.
TENSOR_ARITHMETIC = frozenset({
    # Python's built-ins that compute plain values or iterate (not getattr/eval/open/...: see dynamic_code)
    "abs", "all", "any", "bool", "callable", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object",
    "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "super",
    "tuple", "type", "zip", "staticmethod", "classmethod", "property", "NotImplemented", "Ellipsis",
    # (named one by one, never ``module.*``: a module's private function may evaluate text, issue 50 item 3)
    "math.ceil", "math.floor", "math.prod", "math.sqrt", "math.isqrt", "math.gcd", "math.inf", "math.isclose",
    "math.isfinite", "math.fsum", "math.log2", "math.trunc",
    "itertools.product", "itertools.chain", "itertools.repeat", "itertools.accumulate", "itertools.count",
    "itertools.islice", "itertools.zip_longest",
    "typing.Any", "typing.Optional", "typing.Union", "typing.Tuple", "typing.List", "typing.Sequence",
    "typing.Callable", "numbers.Integral", "numbers.Real", "numbers.Number", "operator.index",
    "operator.add", "operator.mul", "functools.reduce", "functools.partial", "functools.wraps", "functools.cache",
    "functools.lru_cache",
    # torch: making tensors, dtypes and devices, the Function and Module machinery
    "torch.Tensor", "torch.Size", "torch.dtype", "torch.device", "torch.float16", "torch.float32",
    "torch.float64", "torch.bfloat16", "torch.half", "torch.float", "torch.double", "torch.int64",
    "torch.int32", "torch.long", "torch.int", "torch.bool", "torch.finfo", "torch.is_tensor",
    "torch.is_floating_point", "torch.get_default_dtype", "torch.zeros", "torch.ones", "torch.empty",
    "torch.full", "torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like", "torch.arange",
    "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.no_grad", "torch.enable_grad",
    "torch.autograd.Function", "torch.autograd.function.once_differentiable", "torch.autograd.function.FunctionCtx",
    "torch.nn.Module",
    # torch: arithmetic, sums, views, padding and window views
    "torch.stack", "torch.cat", "torch.concat", "torch.clamp", "torch.clip", "torch.minimum", "torch.maximum",
    "torch.where", "torch.cumsum", "torch.sum", "torch.mean", "torch.einsum", "torch.matmul", "torch.outer",
    "torch.diff", "torch.flip", "torch.narrow", "torch.div", "torch.add", "torch.sub", "torch.mul",
    "torch.floor_divide", "torch.roll", "torch.as_strided", "torch.broadcast_to", "torch.repeat_interleave",
    "torch.eye", "torch.kron", "torch.mm", "torch.bmm", "torch.tensordot", "torch.result_type",
    "torch.promote_types", "torch.true_divide", "torch.clamp_min", "torch.clamp_max", "torch.count_nonzero",
    "torch.split", "torch.chunk", "torch.unbind", "torch.squeeze", "torch.unsqueeze", "torch.reshape",
    "torch.permute", "torch.transpose", "torch.flatten", "torch.index_select", "torch.gather", "torch.scatter_add",
    "torch.index_add", "torch.is_grad_enabled", "torch.cuda.is_available",
    "torch.nn.functional.pad", "torch.nn.functional.unfold", "torch.nn.functional.fold",
    # numpy: types and plain arithmetic (a backward may leave autograd, marked @once_differentiable)
    "numpy.integer", "numpy.floating", "numpy.bool_", "numpy.ndarray", "numpy.dtype", "numpy.issubdtype",
    "numpy.float16", "numpy.float32", "numpy.float64", "numpy.int64", "numpy.zeros", "numpy.ones",
    "numpy.empty", "numpy.zeros_like", "numpy.asarray", "numpy.array", "numpy.arange", "numpy.pad",
    "numpy.cumsum", "numpy.sum", "numpy.minimum", "numpy.maximum", "numpy.clip", "numpy.add.at", "numpy.prod",
    "numpy.floor", "numpy.ceil", "numpy.ndim", "numpy.shape", "numpy.number", "numpy.int32",
    # attributes of values: tensors (and arrays), ctx, lists, dicts and strings
    *(f".{name}" for name in (
        "shape", "ndim", "dim", "size", "dtype", "device", "type", "index", "is_floating_point", "element_size",
        "numel", "is_cuda", "requires_grad", "is_contiguous", "T", "item", "tolist", "detach", "cpu", "cuda",
        "numpy", "to", "float", "double", "half", "clone", "contiguous", "view", "view_as", "reshape",
        "reshape_as", "permute", "transpose", "flatten", "unflatten", "squeeze", "unsqueeze", "expand",
        "expand_as", "repeat", "unfold", "narrow", "select", "flip", "split", "chunk", "new_zeros", "new_ones",
        "new_empty", "new_full", "new_tensor", "zero_", "fill_", "copy_", "add", "add_", "sub", "sub_", "mul",
        "mul_", "div", "div_", "neg", "abs", "sum", "mean", "cumsum", "diff", "clamp", "clamp_", "clip",
        "clamp_min", "clamp_max", "min", "max", "minimum", "maximum", "index_add", "index_add_", "where",
        "masked_fill", "masked_fill_", "eq", "ne", "lt", "le", "gt", "ge", "any", "all", "matmul", "astype",
        "mm", "bmm", "outer", "t", "mT", "ndimension", "stride", "storage_offset", "as_strided", "roll",
        "broadcast_to", "repeat_interleave", "sum_to_size", "floor_divide", "remainder", "pow", "index_select",
        "gather", "scatter_add", "scatter_add_", "index_put_", "cumsum_", "new", "get_device", "unbind",
        "true_divide", "count_nonzero", "copy", "data", "mark_dirty", "apply",
        "saved_tensors", "save_for_backward", "needs_input_grad", "mark_non_differentiable",
        "set_materialize_grads", "append", "extend", "insert", "pop", "items", "keys", "values", "get",
        "update", "join", "format", "lower", "upper", "strip", "split", "startswith", "endswith",
        "__init__", "__name__", "__qualname__", "__class__", "__doc__")),
})


# --- what the loop reader (loops.py) allows: lesson 3 loops only over the kernel's offsets, lesson 2 over the outputs
#: The contract's arguments that fix the windows (not the data): a loop may turn as often as they say.
GEOMETRY = ("kernel_size", "stride", "padding", "count_include_pad")
#: Every entry of the geometry is read as at most GEOMETRY_BOUND (the largest kernel, stride or padding that a
#: graded test passes), and a loop nest may turn at most LOOP_LIMIT times there (a loop over a 5×5 kernel's
#: offsets, or over stride phases and taps, turns 25 to 50 times). Every bound the rule accepts only grows
#: with the geometry, so no accepted loop turns more than LOOP_LIMIT times in any graded call, and a hidden
#: case whose outputs are longer than that on both axes leaves a loop over output positions no way through.
GEOMETRY_BOUND, LOOP_LIMIT = 5, 64
NPY_MAXDIMS = 64  # the most entries ``x.shape`` can have
#: The graded functions' contracts, by position: the tests call them positionally, so a parameter's role (the
#: data, a geometry argument, a shape) is the one its *position* has here, whatever the code names it (a data
#: argument named ``kernel_size`` is data: issue 50 item 3). A function not listed is read by its names.
CONTRACTS = {
    "avg_pool2d_loops": ("x", "kernel_size", "stride", "padding", "count_include_pad"),
    "avg_pool2d_numpy": ("x", "kernel_size", "stride", "padding", "count_include_pad"),
    "avg_pool2d_loops_backward": ("grad_out", "input_shape", "kernel_size", "stride", "padding", "count_include_pad"),
    "avg_pool2d_numpy_backward": ("grad_out", "input_shape", "kernel_size", "stride", "padding", "count_include_pad"),
}
#: The contract's arguments that are shapes: a loop over one turns once per dimension the tests pass (4 at most).
SHAPE_ARGUMENTS = {"input_shape": 4}
#: A geometry argument is an int or a short tuple: a loop over one (``tuple(int(k) for k in kernel_size)``) turns
#: at most as often as the longest tuple a graded call passes (``(2, 2, 2)``, refused as a TypeError).
GEOMETRY_LENGTH = 3
#: Built-ins that ``map`` may apply: one conversion per item, so ``map(int, input_shape)`` turns as often as its
#: iterable is long (and is bounded where that is).
MAP_CONVERSIONS = {"int", "float", "abs", "round", "bool", "operator.index"}
#: Library calls that run Python once per element, position or item: a loop that the source does not show.
PER_ELEMENT_CALLS = {"vectorize", "frompyfunc", "apply_along_axis", "apply_over_axes", "map", "filter", "reduce",
                     "starmap", "nditer", "ndindex", "ndenumerate"}
#: Built-ins that iterate over their first argument.
CONSUMERS = {"sum", "list", "tuple", "set", "frozenset", "dict", "sorted", "min", "max", "any", "all", "enumerate",
             "zip", "reversed", "iter", "next", "fromiter"}
#: What sums a window (lesson 2's loops must: ``x[b, c, r0:r1, c0:c1].sum()``), and what only copies or works
#: element by element (free anywhere); any other library call on the data is whole-array work.
WINDOW_SUMS = {"sum", "mean", "nansum", "nanmean", "average", "fsum"}
ELEMENT_WISE = {"pad", "asarray", "array", "ascontiguousarray", "astype", "copy", "reshape", "ravel", "flatten",
                "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "full", "full_like", "zeros", "ones",
                "empty", "zeros_like", "ones_like", "empty_like", "broadcast_to", "where", "clip", "maximum",
                "minimum", "abs", "absolute", "float32", "float64", "float", "int", "max", "min", "len", "range",
                "slice", "divide", "multiply", "add", "subtract", "true_divide", "isinstance", "tuple", "list",
                "item", "tolist", "round", "as_pair", "count_nonzero", "dtype", "result_type"}
LOOP_INSTEAD = ("loop only over the kernel's offsets, e.g. `for di in range(kh)` with `kh, kw = as_pair(kernel_size)` "
                "(or a fixed tuple such as the two axes), and cover the outputs, channels and images with slices")
_APPENDS = {"append": 1, "insert": 1, "add": 1, "appendleft": 1, "extend": None, "update": None, "extendleft": None}
