"""course.network: the spec card's network tables, the layer builders, and their errors."""

import pytest
import torch
from torch import nn

from course.checks import RUNS_WITH_STUDENT_CODE
from course.network import (avg_pool, build, conv, flatten, global_avg_pool, linear, max_pool, module_output,
                            module_parameters, parameter_total, print_summary, relu, shape_table, summary)

# The three examples of the spec card, copied character for character.
CARD_EXAMPLE_1 = """\
Network: [B, 3, 16, 16] -> [B, 8, 8, 8]  dtype=float32
index  name  operation  input shapes      output shapes
0      n0    conv       x=[B, 3, 16, 16]  out=[B, 8, 16, 16]
1      n1    relu       x=[B, 8, 16, 16]  out=[B, 8, 16, 16]
2      n2    avg_pool   x=[B, 8, 16, 16]  out=[B, 8, 8, 8]

Parameters: 224"""

CARD_EXAMPLE_2 = """\
Network: [B, 8, 4, 4] -> [B, 5]  dtype=float32
index  name  operation  input shapes    output shapes
0      n0    avg_pool   x=[B, 8, 4, 4]  out=[B, 8, 1, 1]
1      n1    flatten    x=[B, 8, 1, 1]  out=[B, 8]
2      n2    linear     x=[B, 8]        out=[B, 5]

Parameters: 45"""

CARD_EXAMPLE_3 = """\
Network: [B, 3, 15, 15] -> [B, 3, 8, 8]  dtype=float32
index  name  operation  input shapes      output shapes
0      n0    avg_pool   x=[B, 3, 15, 15]  out=[B, 3, 8, 8]

Parameters: 0"""


def card_networks():
    return [
        (build([conv(8, kernel_size=3, padding=1), relu(), avg_pool(2)], input_shape=("B", 3, 16, 16)),
         ("B", 3, 16, 16), CARD_EXAMPLE_1),
        (build([avg_pool(4), flatten(), linear()], input_shape=("B", 8, 4, 4), output_shape=("B", 5)),
         ("B", 8, 4, 4), CARD_EXAMPLE_2),
        (build([avg_pool(3, stride=2, padding=1, count_include_pad=False)], input_shape=("B", 3, 15, 15)),
         ("B", 3, 15, 15), CARD_EXAMPLE_3),
    ]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_card_examples_print_exactly(index):
    network, shape, expected = card_networks()[index]
    assert summary(network, shape) == expected


def test_print_summary_prints_the_same_text(capsys):
    network, shape, expected = card_networks()[0]
    print_summary(network, shape)
    assert capsys.readouterr().out == expected + "\n"


@pytest.mark.parametrize("index", [0, 1, 2])
def test_card_networks_output_has_the_printed_shape(index):
    network, shape, _ = card_networks()[index]
    out = network(torch.randn(3, *shape[1:]))
    printed = shape_table(network, shape)[-1]["output"]
    assert tuple(out.shape[1:]) == tuple(printed[1:]) and out.shape[0] == 3


def test_card_networks_are_real_modules_with_inferred_sizes():
    first, second, third = (n for n, _, _ in card_networks())
    assert isinstance(first.n0, nn.Conv2d) and first.n0.in_channels == 3 and first.n0.padding == (1, 1)
    assert isinstance(second.n2, nn.Linear) and (second.n2.in_features, second.n2.out_features) == (8, 5)
    assert isinstance(third.n0, nn.AvgPool2d) and third.n0.count_include_pad is False
    assert third.n0.stride == 2
    assert isinstance(build([avg_pool(2)], ("B", 1, 4, 4)).n0, nn.AvgPool2d)
    assert build([avg_pool(2)], ("B", 1, 4, 4)).n0.stride == 2, "stride 0 means kernel_size"
    assert build([avg_pool((2, 3), stride=(0, 1))], ("B", 1, 4, 4)).n0.stride == (2, 1)


def test_layer_repr_reads_like_the_card():
    assert repr(conv(8, kernel_size=3, padding=1)) == "conv(8, kernel_size=3, padding=1)"
    assert repr(avg_pool(3, stride=2, padding=1, count_include_pad=False)) == \
        "avg_pool(3, stride=2, padding=1, count_include_pad=False)"
    assert repr(avg_pool(2)) == "avg_pool(2)"
    assert repr(linear()) == "linear()" and repr(relu()) == "relu()"


def test_lecture_heads_parameter_counts():
    flat = build([flatten(), linear()], ("B", 512, 7, 7), ("B", 1000))
    gap = build([global_avg_pool(), flatten(), linear()], ("B", 512, 7, 7), ("B", 1000))
    assert summary(flat, ("B", 512, 7, 7)).endswith("Parameters: 25089000")
    assert summary(gap, ("B", 512, 7, 7)).endswith("Parameters: 513000")
    assert "global_avg_pool  x=[B, 512, 7, 7]  out=[B, 512, 1, 1]" in summary(gap, ("B", 512, 7, 7))


def test_vgg_like_stack_counts_and_shapes():
    layers = []
    for channels in (16, 32, 64):
        layers += [conv(channels, kernel_size=3, padding=1), relu(), conv(channels, kernel_size=3, padding=1),
                   relu(), max_pool(2)]
    layers += [flatten(), linear(128), relu(), linear()]
    network = build(layers, ("B", 3, 32, 32), ("B", 10))
    text = summary(network, ("B", 3, 32, 32))
    assert text.splitlines()[0] == "Network: [B, 3, 32, 32] -> [B, 10]  dtype=float32"
    assert text.endswith(f"Parameters: {sum(p.numel() for p in network.parameters())}")
    assert "14     n14   max_pool   x=[B, 64, 8, 8]    out=[B, 64, 4, 4]" in text
    assert network(torch.randn(2, 3, 32, 32)).shape == (2, 10)
    assert len(text.splitlines()) == 2 + len(layers) + 2


class Residual(nn.Module):
    """x + conv(relu(conv(x))), shape preserving."""

    def __init__(self, channels):
        super().__init__()
        self.a = nn.Conv2d(channels, channels, 3, padding=1)
        self.b = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


def resnet_like():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(3, stride=2, padding=1), Residual(16), nn.Dropout(0.2),
        nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(16, 7)),
    )


def test_any_sequential_of_common_layers():
    network = resnet_like()
    text = summary(network, ("B", 3, 64, 64))
    lines = text.splitlines()
    assert lines[0] == "Network: [B, 3, 64, 64] -> [B, 7]  dtype=float32"
    assert lines[1].split() == ["index", "name", "operation", "input", "shapes", "output", "shapes"]
    rows = [line.split()[:3] for line in lines[2:-2]]
    assert rows == [["0", "n0", "conv"], ["1", "n1", "batch_norm"], ["2", "n2", "relu"], ["3", "n3", "max_pool"],
                    ["4", "n4", "residual"], ["5", "n5", "dropout"], ["6", "n6.0", "global_avg_pool"],
                    ["7", "n6.1", "flatten"], ["8", "n6.2", "linear"]]
    assert lines[-2] == "" and lines[-1] == f"Parameters: {sum(p.numel() for p in network.parameters())}"
    assert network.eval()(torch.randn(2, 3, 64, 64)).shape == (2, 7)
    # every line of the table is aligned: the output column starts at the same place
    starts = {line.index("out=") for line in lines[2:-2]}
    assert len(starts) == 1 and lines[1].index("output shapes") in starts


def test_summary_leaves_modes_and_statistics_alone():
    network = resnet_like().train()
    before = network[1].running_mean.clone()
    summary(network, ("B", 3, 16, 16))
    assert all(m.training for m in network.modules())
    assert torch.equal(network[1].running_mean, before)


def test_named_children_keep_their_names_and_dtype_is_printed():
    network = nn.Sequential()
    network.add_module("pool", nn.AvgPool2d(2))
    network.add_module("head", nn.Flatten())
    text = summary(network.double(), ("B", 2, 4, 4), dtype=torch.float64)
    assert text.splitlines()[0] == "Network: [B, 2, 4, 4] -> [B, 8]  dtype=float64"
    assert text.splitlines()[2].split()[:3] == ["0", "pool", "avg_pool"]


def test_build_is_seeded_and_leaves_the_global_generator_alone():
    layers = [conv(4, kernel_size=3), relu(), flatten(), linear(3)]
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a = build(layers, ("B", 2, 5, 5), seed=7)
    assert torch.equal(torch.get_rng_state(), state)
    b = build(layers, ("B", 2, 5, 5), seed=7)
    c = build(layers, ("B", 2, 5, 5), seed=8)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.n0.weight, c.n0.weight)


def test_parameter_total():
    network = resnet_like()
    assert parameter_total(network) == sum(p.numel() for p in network.parameters())
    assert parameter_total(nn.Sequential(nn.ReLU())) == 0


# ----- errors: each rule, once right (fits) and once wrong (names the layer and the rule)

def test_window_must_fit_the_map():
    build([conv(4, kernel_size=3), avg_pool(6)], ("B", 1, 8, 8))  # 6x6 map, window 6: fits
    with pytest.raises(ValueError, match=r"layer 1 \(n1, avg_pool\): cannot take an input \[B, 4, 6, 6\]: .*smaller than "
                                         r"kernel_size 7: no window fits"):
        build([conv(4, kernel_size=3), avg_pool(7)], ("B", 1, 8, 8))
    build([avg_pool(5, padding=1)], ("B", 1, 3, 3))  # 3 + 2 >= 5
    with pytest.raises(ValueError, match=r"layer 0 \(n0, max_pool\): cannot take an input \[B, 1, 3, 3\]: .*no window fits"):
        build([max_pool(4, padding=0)], ("B", 1, 3, 3))
    with pytest.raises(ValueError, match=r"layer 0 \(n0, conv\): cannot take an input \[B, 1, 4, 9\]: .*Kernel size can't be greater"):
        build([conv(2, kernel_size=5)], ("B", 1, 4, 9))


def test_padding_at_most_half_the_kernel():
    build([avg_pool(3, stride=1, padding=1)], ("B", 1, 5, 5))
    build([avg_pool(4, stride=1, padding=2)], ("B", 1, 5, 5))
    # the spec card's words, never PyTorch's "pad should be at most half of effective kernel size ... dilation" (issue 53)
    with pytest.raises(ValueError, match=r"layer 0 \(n0, avg_pool\): padding must be at most kernel_size // 2 = 1 on "
                                         r"each axis, got padding=2 with kernel_size=3$"):
        build([avg_pool(3, stride=1, padding=2)], ("B", 1, 5, 5))
    with pytest.raises(ValueError, match=r"layer 2 \(n2, max_pool\): padding must be at most kernel_size // 2 = 1"):
        build([conv(2, kernel_size=1), relu(), max_pool(2, padding=2)], ("B", 1, 5, 5))


def test_linear_width_must_match():
    summary(nn.Sequential(nn.Flatten(), nn.Linear(12, 3)), ("B", 3, 2, 2))
    with pytest.raises(ValueError, match=r"layer 1 \(n1, linear\): in_features = 10 does not match the width 12"):
        summary(nn.Sequential(nn.Flatten(), nn.Linear(10, 3)), ("B", 3, 2, 2))
    build([flatten(), linear(3, in_features=12)], ("B", 3, 2, 2))
    with pytest.raises(ValueError, match=r"layer 1 \(n1, linear\): in_features = 11"):
        build([flatten(), linear(3, in_features=11)], ("B", 3, 2, 2))
    with pytest.raises(ValueError, match=r"layer 0 \(n0, linear\).*flatten first"):
        build([linear(3)], ("B", 3, 2, 2))


def test_conv_channels_must_match_in_a_given_sequential():
    summary(nn.Sequential(nn.Conv2d(3, 4, 3)), ("B", 3, 5, 5))
    with pytest.raises(ValueError, match=r"layer 0 \(n0, conv\): in_channels = 2 does not match the input's 3"):
        summary(nn.Sequential(nn.Conv2d(2, 4, 3)), ("B", 3, 5, 5))
    with pytest.raises(ValueError, match=r"layer 1 \(n1, batch_norm\): num_features = 5"):
        summary(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(5)), ("B", 3, 5, 5))


def test_a_pool_in_a_given_sequential_obeys_the_card():
    summary(nn.Sequential(nn.AvgPool2d(5)), ("B", 1, 5, 5))
    with pytest.raises(ValueError, match=r"layer 0 \(n0, avg_pool\): cannot take an input \[B, 1, 4, 4\]: .*no window fits"):
        summary(nn.Sequential(nn.AvgPool2d(5)), ("B", 1, 4, 4))


def test_unknown_layer_failure_names_the_layer():
    class Broken(nn.Module):
        def forward(self, x):
            return x.view(-1, 7)

    with pytest.raises(ValueError, match=r"layer 1 \(n1, broken\): cannot take an input \[B, 2, 3, 3\]"):
        summary(nn.Sequential(nn.ReLU(), Broken()), ("B", 2, 3, 3))


def test_output_size_of_a_final_linear():
    build([flatten(), linear()], ("B", 2, 2, 2), ("B", 3))
    with pytest.raises(ValueError, match=r"layer 1 \(n1, linear\): out_features is missing"):
        build([flatten(), linear()], ("B", 2, 2, 2))
    with pytest.raises(ValueError, match=r"layer 1 \(n1, linear\): out_features is required"):
        build([flatten(), linear(), relu()], ("B", 2, 2, 2), ("B", 3))
    with pytest.raises(ValueError, match=r"output_shape \[B, 4\] does not match the network's output \[B, 3\]"):
        build([flatten(), linear(3)], ("B", 2, 2, 2), ("B", 4))


def test_bad_input_shapes_and_arguments():
    with pytest.raises(ValueError, match="input_shape"):
        build([relu()], ("B",))
    with pytest.raises(ValueError, match=r"input_shape\[2\] must be an int >= 1"):
        build([relu()], ("B", 3, 0, 4))
    with pytest.raises(ValueError, match=r"input_shape\[0\] is the batch"):
        summary(nn.Sequential(nn.ReLU()), ("N", 3, 4, 4))
    with pytest.raises(TypeError, match="nn.Sequential"):
        summary(nn.ReLU(), ("B", 3, 4, 4))
    with pytest.raises(TypeError, match="layer builders"):
        build([nn.ReLU()], ("B", 3, 4, 4))
    with pytest.raises(TypeError, match=r"layer 0 \(n0, avg_pool\): .*kernel_size.*must be tuple of ints"):
        build([avg_pool(2.0)], ("B", 3, 4, 4))
    with pytest.raises(ValueError, match=r"layer 0 \(n0, avg_pool\): .*should (not be zero|be greater than zero)"):
        build([avg_pool(0)], ("B", 3, 4, 4))
    with pytest.raises(ValueError, match=r"layer 0 \(n0, conv\): expects an image batch"):
        build([conv(2, kernel_size=1)], ("B", 3))
    # an int batch is accepted and printed as the symbol B
    assert summary(nn.Sequential(nn.ReLU()), (5, 3)).splitlines()[0].startswith("Network: [B, 3] -> [B, 3]")


# ----- helpers for graded tests of a student's module class

class TinyHead(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        return self.fc(x.mean((2, 3)))


def test_module_helpers_are_seeded_and_plain():
    assert hasattr(module_output, RUNS_WITH_STUDENT_CODE) and hasattr(module_parameters, RUNS_WITH_STUDENT_CODE)
    x = torch.randn(2, 4, 3, 3)
    params = module_parameters(TinyHead, (4, 2), seed=3)
    assert sorted(params) == ["fc.bias", "fc.weight"] and not params["fc.weight"].requires_grad
    out = module_output(TinyHead, (4, 2), x, seed=3)
    assert type(out) is torch.Tensor and not out.requires_grad
    assert torch.allclose(out, x.mean((2, 3)) @ params["fc.weight"].T + params["fc.bias"])
    assert not torch.equal(module_parameters(TinyHead, (4, 2), seed=4)["fc.weight"], params["fc.weight"])


def test_module_helpers_reject_what_is_not_a_module():
    with pytest.raises(TypeError, match="nn.Module"):
        module_output(lambda *a: None, (), torch.zeros(1))
    with pytest.raises(TypeError, match="forward must return a tensor"):
        module_output(lambda: nn.Identity() if False else _ReturnsList(), (), torch.zeros(1))


class _ReturnsList(nn.Module):
    def forward(self, x):
        return [x]
