# corpus: honest bug: returns (maximum, average) instead of (average, maximum)
# category: bug
# status: ok
# fails: pool_both_tests
# %% pool_both
def pool_both(image, kernel_size):
    batch = torch.from_numpy(np.ascontiguousarray(image))[None, None]
    average = nn.AvgPool2d(kernel_size)(batch)[0, 0].numpy()
    maximum = nn.MaxPool2d(kernel_size)(batch)[0, 0].numpy()
    return maximum, average
