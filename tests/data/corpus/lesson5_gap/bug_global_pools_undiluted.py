# corpus: honest bug (issue 53 item 10): global_pools spreads the peak over height + width values, not height x width (the dilution misread); loses global_pools_values only
# category: bug
# status: ok
# fails: global_pools_values
# %% global_pools
def global_pools(peak, background, height, width):
    """(average, maximum) of a height x width map: every value `background` but one, `peak` (peak >= background)."""
    ### BEGIN SOLUTION
    average = background + (peak - background) / (height + width)
    return float(average), float(max(peak, background))
    ### END SOLUTION
