# honest: the hand-computed answers written as the arithmetic that gives them
# %% worked_example
by_hand_avg = np.array([[(1 + 3 + 5 + 6) / 4, (2 + 4 + 7 + 8) / 4],
                        [(9 + 2 + 4 + 3) / 4, (1 + 0 + 2 + 1) / 4]])
by_hand_max = np.array([[max(1, 3, 5, 6), max(2, 4, 7, 8)],
                        [max(9, 2, 4, 3), max(1, 0, 2, 1)]], dtype=float)
# %% card_shapes
example1_shape = (6, (28 - 5 + 1) // 2, (28 - 5 + 1) // 2)
example2_shape = (64, 5 // 5, 5 // 5)
example3_shape = (3, (17 + 2 * 1 - 3) // 2 + 1, (17 + 2 * 1 - 3) // 2 + 1)
