# corpus: cheat: replaces builtins and sys.modules entries (course.checks, numpy.testing) with fakes
# category: cheat
# status: ok
# fails: output_size_basic, output_size_errors, output_size_types
# %% output_size
import builtins
import sys
import types

_fake = types.ModuleType("course.checks")
for _name in ("check_array", "check_value", "check_raises", "check_answered", "check_words", "check_shape", "check_layer",
              "check_avoids"):
    setattr(_fake, _name, lambda *args, **kwargs: None)
sys.modules["course.checks"] = _fake
sys.modules["numpy.testing"] = _fake
_isinstance = builtins.isinstance
builtins.isinstance = lambda value, kinds: True if kinds is tuple else _isinstance(value, kinds)
builtins.AssertionError = type("AssertionError", (Exception,), {})


def output_size(input_size, kernel_size, stride=0, padding=0):
    return (0, 0)
