# corpus: bad input: every test cell replaced by print("all tests passed"), with a wrong output_size
# category: input
# status: ok
# notebook: edit-tests
# fails: output_size_basic, output_size_errors, output_size_types
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    return (1, 1)
