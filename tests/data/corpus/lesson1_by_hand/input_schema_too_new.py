# corpus: bad input: nbgrader schema_version 99 and a made-up kernelspec (would stop a plain nbgrader batch)
# category: input
# status: ok
# notebook: schema-too-new
# fails:
