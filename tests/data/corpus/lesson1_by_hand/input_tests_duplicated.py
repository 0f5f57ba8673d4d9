# corpus: bad input: test cells and solution cells duplicated (a wrong second copy); the first copy counts
# category: input
# status: ok
# notebook: duplicate-tests, duplicate-solutions
# fails:
