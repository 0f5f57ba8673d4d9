# corpus: cheat: removes the grader's sys.modules blocks and imports torch from its files (or loads them by path) to call torch's pooling from the NumPy exercise
# category: cheat
# status: ok
# requires: namespaces
# fails: *
# reviews: backward_errors, backward_tests, backward_vectorized
# %% avg_pool2d_numpy +
import importlib
import importlib.util
import os
import sys


_found = []


def _torch():
    if _found:
        return _found[0]
    for key in [k for k in sys.modules if k == "torch" or k.startswith(("torch.", "functorch", "torchgen"))]:
        del sys.modules[key]
    importlib.invalidate_caches()
    try:
        _found.append(importlib.import_module("torch"))
        return _found[0]
    except ImportError:
        pass
    for folder in sys.path:  # load it by path, past any finder the grader may have installed
        init = os.path.join(folder, "torch", "__init__.py")
        if os.path.exists(init):
            spec = importlib.util.spec_from_file_location("torch", init,
                                                          submodule_search_locations=[os.path.dirname(init)])
            module = importlib.util.module_from_spec(spec)
            sys.modules["torch"] = module
            spec.loader.exec_module(module)
            _found.append(module)
            return module
    raise ImportError("no torch")


def avg_pool2d_numpy(x, kernel_size, stride=0, padding=0, count_include_pad=True):
    torch = _torch()
    step = stride or kernel_size
    return torch.nn.functional.avg_pool2d(torch.from_numpy(x), kernel_size, step, padding,
                                          count_include_pad=count_include_pad).numpy()
