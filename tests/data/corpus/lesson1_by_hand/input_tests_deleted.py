# corpus: bad input: every test cell deleted (the trusted tests still run); answers right
# category: input
# status: ok
# notebook: delete-tests
# fails:
