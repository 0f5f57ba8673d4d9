# corpus: fault: a memory bomb inside a graded function ends as a memory status, costing that test only
# category: fault
# status: memory
# fails: pool_both_tests
# %% pool_both
def pool_both(image, kernel_size):
    hoard = b"x" * (1 << 20)
    while True:
        hoard = hoard + hoard
