# honest: float32 answers and pooling by a reshape (from the grading corpus: correct_float32)
# %% worked_example
by_hand_avg = np.array([[3.75, 5.25], [4.50, 1.00]], dtype=np.float32)
by_hand_max = np.array([[6, 8], [9, 2]], dtype=np.float32)
# %% pool_both
def pool_both(image, kernel_size):
    """(average, maximum) of non-overlapping windows, computed with a reshape."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    h, w = image.shape[0] // kh, image.shape[1] // kw
    windows = image[: h * kh, : w * kw].reshape(h, kh, w, kw)
    return windows.mean(axis=(1, 3), dtype=np.float32), windows.max(axis=(1, 3))
