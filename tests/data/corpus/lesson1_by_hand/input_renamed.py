# corpus: bad input: the notebook handed in under another file name
# category: input
# status: invalid submission
# notebook: rename
# fails: *
