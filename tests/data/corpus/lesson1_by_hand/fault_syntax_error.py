# corpus: fault: a syntax error in one solution cell costs only the tests of that cell (and what uses it)
# category: fault
# status: ok
# fails: output_size_basic, output_size_errors, output_size_types
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0)
    return (1, 1)
