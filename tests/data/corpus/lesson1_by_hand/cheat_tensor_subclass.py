# corpus: cheat: a torch.Tensor subclass that compares equal to everything (and wrong values)
# category: cheat
# status: ok
# fails: worked_example_tests, worked_example_max_tests, pool_both_tests
# %% worked_example
class Yes(torch.Tensor):
    def __eq__(self, other):
        return torch.ones(self.shape, dtype=torch.bool)

    def all(self, *args, **kwargs):
        return torch.tensor(True)


by_hand_avg = torch.zeros(2, 2).as_subclass(Yes)
by_hand_max = torch.zeros(2, 2).as_subclass(Yes)
# %% pool_both
def pool_both(image, kernel_size):
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    shape = (image.shape[0] // k, image.shape[1] // k)
    return torch.zeros(shape).as_subclass(Yes), torch.zeros(shape).as_subclass(Yes)
