# corpus: bad input: test-cell metadata changed to give 100 points each (points come from source/)
# category: input
# status: ok
# notebook: more-points
# fails:
