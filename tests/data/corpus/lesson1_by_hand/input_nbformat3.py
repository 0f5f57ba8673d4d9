# corpus: bad input: the right answers saved as an old nbformat 3 notebook
# category: input
# status: invalid submission
# notebook: nbformat3
# fails: *
