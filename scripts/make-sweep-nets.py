#!/usr/bin/env python3
"""Writes ncnn .param files of networks that are not in ncnn's benchmark set, built from
grouped convolutions, for measuring infer beside ncnn on layer forms the eleven classification
networks do not exercise (models/sweep/):

  shufflenet_v1_g3.param  ShuffleNet v1 1.0x, 3 groups (Zhang et al. 2017): grouped 1x1
                          convolutions (80 and 72 channels per group), channel shuffle, depthwise
                          3x3, average-pool shortcuts joined by Concat, residual sums.
  regnetx_200mf.param     RegNetX-200MF (Radosavovic et al. 2020): widths 24/56/152/368, depths
                          1/1/4/7, grouped 3x3 convolutions of 8 channels per group, 1x1
                          projections, residual sums.
  resnext50_32x4d.param   ResNeXt-50 32x4d (Xie et al. 2017): ResNet-50's bottleneck blocks
                          (3/4/6/3) with their 3x3 convolutions in 32 groups of 4, 8, 16 and 32
                          channels, stride 2 in the first block of stages 2-4.

Batch norms are taken as folded into the convolutions (bias_term=1), as converted models have
them; pools round their output size down (pad_mode 1), as PyTorch's do. Run from the repository
root: python3 scripts/make-sweep-nets.py
"""
import os


class Net:
    def __init__(self):
        self.layers = []  # (type, name, inputs, outputs, params)

    def add(self, type_, name, inputs, outputs, params=""):
        self.layers.append((type_, name, list(inputs), list(outputs), params))
        return outputs[0] if len(outputs) == 1 else outputs

    def conv(self, name, x, cin, cout, k=1, s=1, group=1, relu=True):
        pad = k // 2
        act = " 9=1" if relu else ""
        if group == 1:
            return self.add("Convolution", name, [x], [name],
                            f"0={cout} 1={k} 3={s} 4={pad} 5=1 6={cout * cin * k * k}{act}")
        return self.add("ConvolutionDepthWise", name, [x], [name],
                        f"0={cout} 1={k} 3={s} 4={pad} 5=1 6={cout * (cin // group) * k * k} "
                        f"7={group}{act}")

    def text(self):
        # ncnn needs a Split where a blob has several readers.
        readers = {}
        for _, _, ins, _, _ in self.layers:
            for b in ins:
                readers[b] = readers.get(b, 0) + 1
        out, seen = [], {}
        for t, n, ins, outs, p in self.layers:
            renamed = []
            for b in ins:
                if readers.get(b, 0) > 1:
                    i = seen.get(b, 0)
                    seen[b] = i + 1
                    renamed.append(f"{b}_splitncnn_{i}")
                else:
                    renamed.append(b)
            out.append((t, n, renamed, outs, p))
            for b in outs:
                if readers.get(b, 0) > 1:
                    k = readers[b]
                    out.append(("Split", f"splitncnn_{b}", [b],
                                [f"{b}_splitncnn_{i}" for i in range(k)], ""))
        blobs = set()
        for _, _, ins, outs, _ in out:
            blobs.update(ins)
            blobs.update(outs)
        lines = ["7767517", f"{len(out)} {len(blobs)}"]
        for t, n, ins, outs, p in out:
            lines.append(f"{t:<24} {n:<24} {len(ins)} {len(outs)} {' '.join(ins + outs)}"
                         + (f" {p}" if p else ""))
        return "\n".join(lines) + "\n"


def head(net, x, c):
    x = net.add("Pooling", "pool_global", [x], ["pool_global"], "0=1 4=1")
    x = net.add("InnerProduct", "fc", [x], ["fc"], f"0=1000 1=1 2={1000 * c}")
    net.add("Softmax", "prob", [x], ["prob"])


def shufflenet_v1():
    g = 3
    net = Net()
    net.add("Input", "data", [], ["data"], "0=224 1=224 2=3")
    x = net.conv("conv1", "data", 3, 24, 3, 2)
    x = net.add("Pooling", "pool1", [x], ["pool1"], "0=0 1=3 2=2 3=1 5=1")
    cin = 24
    for stage, (cout, units) in enumerate([(240, 4), (480, 8), (960, 4)], start=2):
        for u in range(units):
            n = f"s{stage}u{u}"
            first = u == 0
            mid = cout // 4
            branch_out = cout - cin if first else cout
            # The first unit of stage 2 reads 24 channels: its first 1x1 is not grouped.
            g1 = 1 if stage == 2 and first else g
            y = net.conv(f"{n}_c1", x, cin, mid, 1, 1, g1)
            y = net.add("ShuffleChannel", f"{n}_shuffle", [y], [f"{n}_shuffle"], f"0={g}")
            y = net.conv(f"{n}_dw", y, mid, mid, 3, 2 if first else 1, mid, relu=False)
            y = net.conv(f"{n}_c2", y, mid, branch_out, 1, 1, g, relu=False)
            if first:
                p = net.add("Pooling", f"{n}_pool", [x], [f"{n}_pool"], "0=1 1=3 2=2 3=1 5=1")
                x = net.add("Concat", f"{n}_cat", [p, y], [f"{n}_cat"], "0=0")
            else:
                x = net.add("Eltwise", f"{n}_sum", [x, y], [f"{n}_sum"], "0=1")
            x = net.add("ReLU", f"{n}_relu", [x], [f"{n}_relu"])
            cin = cout
    head(net, x, cin)
    return net.text()


def bottleneck(net, n, x, cin, width, cout, s, groups):
    """A residual block: 1x1 (cin -> width), grouped 3x3 of stride s (width -> width), 1x1
    (width -> cout), a 1x1 projection of the shortcut where the shape changes, sum, ReLU."""
    y = net.conv(f"{n}_a", x, cin, width, 1, 1)
    y = net.conv(f"{n}_b", y, width, width, 3, s, groups)
    y = net.conv(f"{n}_c", y, width, cout, 1, 1, relu=False)
    short = x
    if s != 1 or cin != cout:
        short = net.conv(f"{n}_proj", x, cin, cout, 1, s, relu=False)
    x = net.add("Eltwise", f"{n}_sum", [short, y], [f"{n}_sum"], "0=1")
    return net.add("ReLU", f"{n}_relu", [x], [f"{n}_relu"])


def regnetx_200mf():
    gw = 8
    net = Net()
    net.add("Input", "data", [], ["data"], "0=224 1=224 2=3")
    x = net.conv("stem", "data", 3, 32, 3, 2)
    cin = 32
    for stage, (w, depth) in enumerate([(24, 1), (56, 1), (152, 4), (368, 7)], start=1):
        for b in range(depth):
            x = bottleneck(net, f"s{stage}b{b}", x, cin, w, w, 2 if b == 0 else 1, w // gw)
            cin = w
    head(net, x, cin)
    return net.text()


def resnext50_32x4d():
    net = Net()
    net.add("Input", "data", [], ["data"], "0=224 1=224 2=3")
    x = net.conv("conv1", "data", 3, 64, 7, 2)
    x = net.add("Pooling", "pool1", [x], ["pool1"], "0=0 1=3 2=2 3=1 5=1")
    cin = 64
    for stage, (width, cout, depth) in enumerate(
            [(128, 256, 3), (256, 512, 4), (512, 1024, 6), (1024, 2048, 3)], start=1):
        for b in range(depth):
            s = 2 if b == 0 and stage > 1 else 1
            x = bottleneck(net, f"s{stage}b{b}", x, cin, width, cout, s, 32)
            cin = cout
    head(net, x, cin)
    return net.text()


if __name__ == "__main__":
    os.makedirs("models/sweep", exist_ok=True)
    for name, text in [("shufflenet_v1_g3", shufflenet_v1()), ("regnetx_200mf", regnetx_200mf()),
                       ("resnext50_32x4d", resnext50_32x4d())]:
        with open(f"models/sweep/{name}.param", "w") as f:
            f.write(text)
        print(f"models/sweep/{name}.param: {text.splitlines()[1]} (layers, blobs)")
