# corpus: honest bug: the formula is right but no argument is checked
# category: bug
# status: ok
# fails: output_size_errors, output_size_types
# %% output_size
def output_size(input_size, kernel_size, stride=0, padding=0):
    pair = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    (h, w), (kh, kw), (sh, sw), (ph, pw) = map(pair, (input_size, kernel_size, stride, padding))
    sh, sw = sh or kh, sw or kw
    return ((h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1)
