# corpus: bad input: the output_size solution cell turned into a markdown cell (it is not run)
# category: input
# status: ok
# notebook: markdown-solution:output_size
# fails: output_size_basic, output_size_errors, output_size_types
