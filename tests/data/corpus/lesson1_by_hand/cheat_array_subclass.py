# corpus: cheat: returns an ndarray subclass whose comparisons are always True (and wrong values)
# category: cheat
# status: ok
# fails: pool_both_tests
# %% pool_both
class Agreeable(np.ndarray):
    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)

    __ge__ = __le__ = __gt__ = __lt__ = __eq__

    def all(self, *args, **kwargs):
        return True


def pool_both(image, kernel_size):
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    shape = (image.shape[0] // k, image.shape[1] // k)
    return np.zeros(shape, np.float32).view(Agreeable), np.zeros(shape, np.float32).view(Agreeable)
