# corpus: bad input: all nbgrader metadata removed, so no solution cell can be found
# category: input
# status: no solution cells
# notebook: strip-metadata
# fails: *
