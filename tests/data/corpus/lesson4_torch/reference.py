# corpus: the instructor's reference solution, unchanged
# category: correct
# status: ok
# fails:
