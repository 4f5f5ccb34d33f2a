"""Writer: builds one ONNX graph with onnx.helper, naming nodes, constants and initializers the way
PyTorch's TorchScript or dynamo exporter does, and drawing every model's seeded random weights."""
import collections
import contextlib

import numpy as np
from onnx import helper, numpy_helper

# Values the exporters write: Slice's "to the end", torch.finfo(float32).min for masked scores
# and the producer version of the PyTorch release whose spellings these are.
INT64_MAX = 2**63 - 1
F32_LOWEST = float(np.finfo(np.float32).min)  # torch.finfo(torch.float32).min
PRODUCER_VERSION = "2.11.0"


class Writer:
    """Collects nodes and initializers, naming them the way each exporter does."""

    def __init__(self, form, seed, opset=None):
        assert form in ("torchscript", "dynamo")
        self.form = form
        # The exporter's opset: TorchScript 17, dynamo 18 (its default) or what the user asked
        # for with opset_version (from 20 torchlib writes Gelu, from 23 Attention).
        self.opset = opset or (17 if form == "torchscript" else 18)
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self._scope = ""
        self._ts_counts = collections.Counter()
        self._dy_counts = collections.Counter()
        self._val = 0
        self._const_cache = {}
        self._matmul_id = 300  # TorchScript numbers folded weights onnx::MatMul_<n>
        # Every parameter under its Hugging Face name, in PyTorch's layout (Linear weights
        # [out, in]): what the numpy references (ref_*) compute from, whatever the graph names.
        self.weights = {}

    @contextlib.contextmanager
    def scope(self, name):
        """TorchScript names nodes after the module path that created them."""
        old = self._scope
        self._scope = f"{old}/{name}"
        try:
            yield
        finally:
            self._scope = old

    def _ts_name(self, op):
        key = (self._scope, op)
        k = self._ts_counts[key]
        self._ts_counts[key] += 1
        return f"{self._scope}/{op}" + (f"_{k}" if k else "")

    def _dy_value(self, base):
        if base is None:
            self._val += 1
            return f"val_{self._val}"
        k = self._dy_counts[base]
        self._dy_counts[base] += 1
        return base if k == 0 else f"{base}_{k}"

    def op(self, op_type, inputs, outs=1, name=None, **attrs):
        """One node; returns its output name (a list for outs > 1). `name` is the dynamo value
        name (its aten op: linear, view, transpose...); TorchScript derives names from the scope."""
        if self.form == "torchscript":
            node_name = self._ts_name(op_type)
            outputs = [f"{node_name}_output_{i}" for i in range(outs)]
        else:
            outputs = [self._dy_value(name) for _ in range(outs)]
            node_name = f"node_{outputs[0]}"
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=node_name, **attrs))
        return outputs[0] if outs == 1 else outputs

    def const(self, value, dtype):
        """A constant: a Constant node in TorchScript form, a shared initializer in dynamo form."""
        arr = np.array(value, dtype=dtype)
        if self.form == "torchscript":
            node_name = self._ts_name("Constant")
            out = f"{node_name}_output_0"
            self.nodes.append(helper.make_node("Constant", [], [out], name=node_name,
                                               value=numpy_helper.from_array(arr)))
            return out
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._const_cache:
            name = self._dy_value(None)
            self.inits.append(numpy_helper.from_array(arr, name))
            self._const_cache[key] = name
        return self._const_cache[key]

    def i64(self, value):
        return self.const(value, np.int64)

    def f32(self, value):
        return self.const(value, np.float32)

    def param(self, name, arr):
        """A model parameter kept under its module path."""
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        self.weights[name] = arr
        return name

    def folded_weight(self, arr, path=None):
        """A weight the exporter transposed at export time (Linear's W^T), under its own name;
        `path` records the parameter (arr^T) under its module path for the references."""
        if path is not None:
            self.weights[path] = np.ascontiguousarray(arr.T)
        if self.form == "torchscript":
            name = f"onnx::MatMul_{self._matmul_id}"
            self._matmul_id += 1
        else:
            name = self._dy_value(None)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    # Seeded random weights, scaled so every layer carries signal.
    def randn(self, *shape, std=0.05):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def uniform(self, lo, hi, *shape):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)

    def input(self, name, elem, dims):
        self.inputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def output(self, value, name, elem, dims):
        """Renames the value producing `name` so the graph output carries the exporter's name."""
        for n in self.nodes:
            for i, o in enumerate(n.output):
                if o == value:
                    n.output[i] = name
            for i, x in enumerate(n.input):
                if x == value:
                    n.input[i] = name
        self.outputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def model(self):
        opset, ir = self.opset, 8 if self.form == "torchscript" else 10
        graph = helper.make_graph(self.nodes, "main_graph", self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="pytorch", producer_version=PRODUCER_VERSION)
        m.ir_version = ir
        return m


def is_static(dims):
    return all(isinstance(d, int) for d in dims)
