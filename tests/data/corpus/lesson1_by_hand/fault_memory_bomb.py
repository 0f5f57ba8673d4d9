# corpus: fault: a memory bomb inside a graded function ends as a memory status, costing that test only
# category: fault
# (timeout is accepted too: under load on a 2-core machine the bomb can spend its 5 CPU seconds in the
# kernel's reclaim before it reaches the cap; either way the test scores 0 and the others keep their points)
# status: memory, timeout
# fails: pool_both_tests
# %% pool_both
def pool_both(image, kernel_size):
    hoard = b"x" * (1 << 20)
    while True:
        hoard = hoard + hoard
