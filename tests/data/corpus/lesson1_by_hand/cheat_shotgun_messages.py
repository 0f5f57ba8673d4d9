# corpus: cheat: every bad-argument error keeps its type (the student's checks decide it) but its message names every argument at once, so it "names the argument" whatever was wrong (issue 31 item 6); check_raises compares the errors of one cell: two for different arguments may not name the same arguments alike
# category: cheat
# status: ok
# fails: output_size_errors, output_size_types
# %% output_size +
_honest_output_size = output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    try:
        return _honest_output_size(input_size, kernel_size, stride, padding)
    except TypeError:
        raise TypeError("input_size, kernel_size, stride or padding has the wrong type") from None
    except ValueError:
        raise ValueError("input_size, kernel_size, stride or padding is out of range") from None
