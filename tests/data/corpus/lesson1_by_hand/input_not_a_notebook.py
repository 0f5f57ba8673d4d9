# corpus: bad input: a file that is JSON but not a notebook
# category: input
# status: invalid submission
# fails: *
# %% raw
["this", "is", "a", "list", "not", "a", "notebook"]
