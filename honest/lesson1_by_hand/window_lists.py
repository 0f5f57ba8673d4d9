# honest: each window's four values listed, then averaged and maxed with NumPy
# %% worked_example
windows = [[[1, 3, 5, 6], [2, 4, 7, 8]],
           [[9, 2, 4, 3], [1, 0, 2, 1]]]
by_hand_avg = np.mean(np.array(windows, dtype=float), axis=-1)
by_hand_max = np.max(np.array(windows, dtype=float), axis=-1)
# %% card_shapes
h1 = (28 - 5 + 1) // 2
h3 = (17 + 2 - 3) // 2 + 1
example1_shape = (6, h1, h1)
example2_shape = (64, 1, 1)
example3_shape = (3, h3, h3)
