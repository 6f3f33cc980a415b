#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""image.py make OUT | after OUT - the image-geometry ops of opsets 18 to
20, one node a case: Col2Im over 1 and 2 spatial dims with strides,
dilations, pads, several channels and images, and rows no block reaches;
AffineGrid in 2 and 3 dims, with and without align_corners, a dim of 1;
GridSample in each mode, padding mode and alignment, in 2 dims (opsets
16 and 20) and 3 (opset 20), the grid reaching past the image;
Pad's wrap mode (circular padding), pads past the dim, crops, axes;
Resize's opset 18-19 additions (axes, keep_aspect_ratio_policy,
half_pixel_symmetric, antialias: linear and cubic, shrinking by whole and
fractional factors and growing, each coordinate mode, exclude_outside,
NCHW, NHWC-like, 2-D and 3-D images); RoiAlign over boxes inside, across and
past the image, tiny and empty ones, in both modes, both coordinate
modes (and opset 10's), sampling ratios given and, with the boxes known
at load, 0 (each box's own); DeformConv with strides, pads, dilations,
groups, offset groups, masks, biases, offsets reaching past the image.
onnxruntime gives the expected outputs (cases.sh)."""
import os
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import caselib

rng = np.random.default_rng(11)


def save(out, name, node, feeds, consts, opset):
    caselib.save(out, name, [node], feeds, consts, [("y", TP.FLOAT)], [("", opset)], 8)


def col2im(out, name, n, c, image, block, **attrs):
    d = attrs.get("dilations", [1] * len(image))
    s = attrs.get("strides", [1] * len(image))
    p = attrs.get("pads", [0] * 2 * len(image))
    blocks = 1
    for i in range(len(image)):
        span = d[i] * (block[i] - 1) + 1
        blocks *= (image[i] + p[i] + p[len(image) + i] - span) // s[i] + 1
    x = rng.standard_normal((n, c * int(np.prod(block)), blocks)).astype(np.float32)
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    save(out, "col2im_" + name, node, {"x": x},
         {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}, 18)


def affine_grid(out, name, size, align):
    nsp = len(size) - 2
    theta = rng.standard_normal((size[0], nsp, nsp + 1)).astype(np.float32)
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=align)
    save(out, "affine_grid_" + name, node, {"theta": theta}, {"size": np.array(size, np.int64)},
         20)


def pad_wrap(out, name, shape, pads, axes=None, numpy=False):
    """numpy: numpy's pad is the oracle (pads past the dim, where
    onnxruntime 1.30 writes zeros before the first wrap)."""
    x = rng.standard_normal(shape).astype(np.float32)
    ins = ["x", "pads"] + (["", "axes"] if axes is not None else [])
    consts = {"pads": np.array(pads, np.int64)}
    if axes is not None:
        consts["axes"] = np.array(axes, np.int64)
    node = helper.make_node("Pad", ins, ["y"], mode="wrap")
    save(out, "pad_wrap_" + name, node, {"x": x}, consts, 19)
    if numpy:
        d = os.path.join(out, "pad_wrap_" + name)
        r = len(shape)
        y = np.pad(x, [(pads[i], pads[r + i]) for i in range(r)], mode="wrap")
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, "y").SerializeToString())
        with open(os.path.join(d, "oracle"), "w") as f:
            f.write("numpy\n")


def grid_sample(out, name, xshape, gshape, opset, **attrs):
    x = rng.standard_normal(xshape).astype(np.float32)
    g = rng.uniform(-1.3, 1.3, gshape).astype(np.float32)
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    save(out, "grid_sample_" + name, node, {"x": x, "grid": g}, {}, opset)


def resize(out, name, xshape, opset, scales=None, sizes=None, **attrs):
    x = rng.standard_normal(xshape).astype(np.float32)
    consts = {}
    ins = ["x", ""]
    if scales is not None:
        consts["scales"] = np.array(scales, np.float32)
        ins.append("scales")
    else:
        consts["sizes"] = np.array(sizes, np.int64)
        ins += ["", "sizes"]
    node = helper.make_node("Resize", ins, ["y"], **attrs)
    save(out, "resize_" + name, node, {"x": x}, consts, opset)


BOXES = np.array([[1.0, 1.5, 8.0, 7.0], [0.0, 0.0, 11.9, 9.9], [-3.0, 2.0, 4.0, 14.0],
                  [5.2, 5.1, 5.6, 5.3], [6.0, 3.0, 6.0, 3.0], [9.0, -2.0, 16.0, 3.5]],
                 np.float32)


def roi_align(out, name, opset, const_boxes=False, scale=1.0, **attrs):
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    bi = np.array([0, 1, 1, 0, 1, 0], np.int64)
    boxes = BOXES / scale
    feeds, consts = {"x": x}, {}
    (consts if const_boxes else feeds)["rois"] = boxes
    feeds["bi"] = bi
    node = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], spatial_scale=scale, **attrs)
    save(out, "roi_align_" + name, node, feeds, consts, opset)


def deform_conv(out, name, n, c, hw, oc, k, mask=False, bias=False, scale=2.0, **attrs):
    s, d = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    og, g = attrs.get("offset_group", 1), attrs.get("group", 1)
    oh = (hw[0] + p[0] + p[2] - ((k[0] - 1) * d[0] + 1)) // s[0] + 1
    ow = (hw[1] + p[1] + p[3] - ((k[1] - 1) * d[1] + 1)) // s[1] + 1
    feeds = {"x": rng.standard_normal((n, c) + tuple(hw)).astype(np.float32),
             "off": (rng.standard_normal((n, og * 2 * k[0] * k[1], oh, ow)) * scale)
             .astype(np.float32)}
    consts = {"w": rng.standard_normal((oc, c // g) + tuple(k)).astype(np.float32)}
    ins = ["x", "w", "off"]
    if bias or mask:
        consts["b"] = rng.standard_normal(oc).astype(np.float32)
        ins.append("b" if bias else "")
    if mask:
        feeds["mask"] = rng.random((n, og * k[0] * k[1], oh, ow)).astype(np.float32)
        ins.append("mask")
        if not bias:
            del consts["b"]
    node = helper.make_node("DeformConv", ins, ["y"], **attrs)
    save(out, "deform_conv_" + name, node, feeds, consts, 19)


def make(out):
    col2im(out, "basic", 1, 1, [5, 5], [2, 2])
    col2im(out, "strided", 1, 2, [6, 7], [2, 2], strides=[2, 2])
    col2im(out, "dilated_padded", 2, 3, [5, 6], [3, 2], dilations=[2, 1], pads=[1, 0, 1, 2])
    col2im(out, "all", 2, 2, [9, 8], [3, 3], dilations=[2, 1], pads=[1, 2, 2, 1],
           strides=[2, 3])
    col2im(out, "1d", 1, 3, [7], [3], strides=[2])
    affine_grid(out, "2d", [2, 3, 4, 5], 0)
    affine_grid(out, "2d_align", [2, 1, 4, 5], 1)
    affine_grid(out, "2d_one_wide", [1, 1, 3, 1], 1)
    affine_grid(out, "3d", [1, 2, 2, 3, 4], 0)
    affine_grid(out, "3d_align", [2, 1, 3, 2, 4], 1)
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                grid_sample(out, "%s_%s_%d" % (mode, pad, align), (2, 3, 4, 5), (2, 3, 4, 2), 16,
                            mode=mode, padding_mode=pad, align_corners=align)
    grid_sample(out, "opset20_linear", (1, 2, 5, 4), (1, 6, 3, 2), 20, mode="linear")
    grid_sample(out, "opset20_cubic", (1, 2, 5, 4), (1, 6, 3, 2), 20, mode="cubic",
                padding_mode="border")
    for mode in ("linear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            grid_sample(out, "3d_%s_%s" % (mode, pad), (1, 2, 3, 4, 5), (1, 2, 3, 4, 3), 20,
                        mode=mode, padding_mode=pad, align_corners=int(pad == "border"))
    resize(out, "axes_scales", (1, 2, 4, 5), 18, scales=[1.5, 2.0], axes=[2, 3], mode="linear")
    resize(out, "axes_sizes", (1, 2, 4, 5), 18, sizes=[7], axes=[-1], mode="nearest")
    resize(out, "not_larger", (1, 2, 4, 6), 18, sizes=[9, 9], axes=[2, 3], mode="linear",
           keep_aspect_ratio_policy="not_larger")
    resize(out, "not_smaller", (1, 2, 4, 6), 18, sizes=[9, 9], axes=[2, 3], mode="cubic",
           keep_aspect_ratio_policy="not_smaller")
    resize(out, "not_larger_all", (1, 1, 5, 3), 18, sizes=[1, 1, 8, 8], mode="nearest",
           keep_aspect_ratio_policy="not_larger")
    resize(out, "half_pixel_symmetric", (1, 2, 4, 5), 19, scales=[1, 1, 1.7, 0.6], mode="linear",
           coordinate_transformation_mode="half_pixel_symmetric")
    resize(out, "half_pixel_symmetric_cubic", (1, 1, 6, 5), 19, sizes=[1, 1, 9, 3], mode="cubic",
           coordinate_transformation_mode="half_pixel_symmetric")
    for mode in ("linear", "cubic"):
        for coord in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                      "half_pixel_symmetric"):
            resize(out, "antialias_%s_%s" % (mode, coord), (1, 2, 9, 11), 19,
                   scales=[1, 1, 0.5, 0.35], mode=mode, antialias=1,
                   coordinate_transformation_mode=coord)
        resize(out, "antialias_%s_exclude" % mode, (2, 1, 10, 7), 18, sizes=[2, 1, 3, 5],
               mode=mode, antialias=1, exclude_outside=1)
        resize(out, "antialias_%s_grow" % mode, (1, 1, 4, 5), 18, scales=[1, 1, 1.6, 2.5],
               mode=mode, antialias=1)
        resize(out, "antialias_%s_mixed" % mode, (1, 3, 8, 5), 18, scales=[1, 1, 0.4, 1.8],
               mode=mode, antialias=1, cubic_coeff_a=-0.5)
    resize(out, "antialias_nhwc", (1, 12, 10, 3), 18, scales=[1, 0.3, 0.5, 1], mode="linear",
           antialias=1)
    resize(out, "antialias_2d", (13, 9), 18, sizes=[4, 3], mode="cubic", antialias=1)
    resize(out, "antialias_3d", (1, 2, 6, 8, 7), 18, scales=[1, 1, 0.5, 0.5, 0.6],
           mode="linear", antialias=1)
    resize(out, "antialias_one_axis", (1, 2, 6, 16), 18, sizes=[5], axes=[3], mode="linear",
           antialias=1)
    for mode in ("avg", "max"):
        for coord in ("half_pixel", "output_half_pixel"):
            roi_align(out, "%s_%s" % (mode, coord), 16, mode=mode, output_height=3,
                      output_width=4, sampling_ratio=2, coordinate_transformation_mode=coord)
        roi_align(out, "%s_ratio0_known" % mode, 16, const_boxes=True, mode=mode,
                  output_height=2, output_width=3, sampling_ratio=0)
    roi_align(out, "opset10", 10, output_height=2, output_width=2, sampling_ratio=1)
    roi_align(out, "scaled", 16, scale=0.5, output_height=4, output_width=2, sampling_ratio=3)
    roi_align(out, "ratio0_known_opset10", 10, const_boxes=True, output_height=3,
              output_width=3)
    deform_conv(out, "basic", 1, 2, (5, 6), 3, (3, 3))
    deform_conv(out, "strided_padded", 2, 3, (7, 8), 4, (3, 3), strides=[2, 2],
                pads=[1, 1, 1, 1], bias=True)
    deform_conv(out, "dilated_rect", 1, 2, (8, 9), 2, (2, 3), dilations=[2, 1],
                pads=[1, 0, 0, 2], mask=True)
    deform_conv(out, "groups", 1, 4, (6, 6), 6, (3, 3), group=2, pads=[1, 1, 1, 1], bias=True,
                mask=True)
    deform_conv(out, "offset_groups", 2, 4, (6, 7), 2, (3, 3), offset_group=2, mask=True)
    deform_conv(out, "far_offsets", 1, 1, (4, 5), 2, (2, 2), scale=6.0)
    pad_wrap(out, "2d", [1, 2, 4, 5], [0, 0, 1, 2, 0, 0, 2, 1])
    pad_wrap(out, "past_the_dim", [2, 3], [0, 4, 0, 5], numpy=True)
    pad_wrap(out, "crop", [1, 3, 6], [0, -1, 2, 0, 1, -2])
    pad_wrap(out, "axes", [2, 3, 4, 5], [1, 2, 2, 1], axes=[-1, 2])


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
