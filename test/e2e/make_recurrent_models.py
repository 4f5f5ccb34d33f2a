"""Writes small RNN / GRU / LSTM models in the forms ONNX's conformance data leaves out, with
random weights (fixed seed), input .npy files and a manifest for test/e2e/recurrent_ops.py:
bidirectional layers with sequence_lens shorter than the sequence, initial states, layout 1,
clip, peepholes, GRU linear_before_reset, LSTM input_forget, non-default activation lists with
activation_alpha / activation_beta, omitted outputs, and a double-precision LSTM.

  <name>.onnx          one model per form (X and initial states are graph inputs, the rest
                       initializers)
  <name>__ref.onnx     for forms ONNX Runtime refuses (layout 1, double): the same layer in
                       layout 0 and float, to run ONNX Runtime on instead
  <name>/inputs/*.npy  the inputs the comparison runs on (and <name>__ref/inputs/*.npy)
  manifest.json        per model: name, input names, and for the twins the reference model,
                       the output transposes and the output dtype

Usage: make_recurrent_models.py OUT_DIR
"""
import json
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEQ, BATCH, INPUT, HIDDEN = 5, 3, 4, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def make(out, manifest, name, op, *, direction="forward", layout=0, lengths=None,
         initial=False, bias=True, peepholes=False, outputs=("Y", "Y_h", "Y_c"),
         dtype=np.float32, opset=14, **attrs):
    """Writes model `name`; when ONNX Runtime cannot run its form (layout 1, double), also a
    reference twin `name`__ref in layout 0 / float with the same values, whose outputs
    recurrent_ops.py transposes / casts back."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    g, dirs = GATES[op], 2 if direction == "bidirectional" else 1

    def rand(shape, scale=0.5):  # float32 values, exact in the double model and its float twin
        return rng.uniform(-scale, scale, shape).astype(np.float32)

    # Values in layout 0; layout 1 transposes X and the states when writing.
    values = {"X": rand([SEQ, BATCH, INPUT], 1.0),
              "W": rand([dirs, g * HIDDEN, INPUT]),
              "R": rand([dirs, g * HIDDEN, HIDDEN])}
    if bias:
        values["B"] = rand([dirs, 2 * g * HIDDEN])
    if lengths:
        values["sequence_lens"] = np.array(lengths, np.int32)
    if initial:
        values["initial_h"] = rand([dirs, BATCH, HIDDEN])
        if op == "LSTM":
            values["initial_c"] = rand([dirs, BATCH, HIDDEN])
    if peepholes:
        values["P"] = rand([dirs, 3 * HIDDEN])
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"] + (
        ["initial_c", "P"] if op == "LSTM" else [])
    fed = ("X", "initial_h", "initial_c")  # graph inputs; the rest are initializers
    wanted = [o for o in outputs if op == "LSTM" or o != "Y_c"]
    all_outs = ["Y", "Y_h", "Y_c"][:3 if op == "LSTM" else 2]

    def write(model_name, lay, dt):
        onnx_type = TensorProto.FLOAT if dt == np.float32 else TensorProto.DOUBLE
        inits, graph_inputs, feeds, ins = [], [], {}, []
        for key in order:
            if key not in values:
                ins.append("")
                continue
            v = values[key]
            if key != "sequence_lens":
                v = v.astype(dt)
            if lay and key == "X" or lay and key.startswith("initial"):
                v = np.ascontiguousarray(v.transpose(1, 0, 2))
            if key in fed:
                graph_inputs.append(helper.make_tensor_value_info(key, onnx_type, list(v.shape)))
                feeds[key] = v
            else:
                inits.append(numpy_helper.from_array(v, key))
            ins.append(key)
        while ins[-1] == "":
            ins.pop()
        outs = [o if o in wanted else "" for o in all_outs]
        while outs[-1] == "":
            outs.pop()
        extra = dict(attrs, layout=lay) if lay else attrs
        node = helper.make_node(op, ins, outs, name=f"{op}_0", direction=direction,
                                hidden_size=HIDDEN, **extra)
        y_shape = [BATCH, SEQ, dirs, HIDDEN] if lay else [SEQ, dirs, BATCH, HIDDEN]
        state_shape = [BATCH, dirs, HIDDEN] if lay else [dirs, BATCH, HIDDEN]
        out_infos = [helper.make_tensor_value_info(o, onnx_type,
                                                   y_shape if o == "Y" else state_shape)
                     for o in wanted]
        graph = helper.make_graph([node], model_name, graph_inputs, out_infos, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, model_name + ".onnx"))
        os.makedirs(os.path.join(out, model_name, "inputs"), exist_ok=True)
        for k, v in feeds.items():
            np.save(os.path.join(out, model_name, "inputs", k + ".npy"), v)
        return list(feeds)

    entry = {"name": name, "inputs": write(name, layout, dtype)}
    if layout or dtype != np.float32:
        write(name + "__ref", 0, np.float32)
        entry["reference"] = name + "__ref"
        # layout 0 -> 1: Y [S, D, B, H] -> [B, S, D, H]; states [D, B, H] -> [B, D, H].
        entry["transpose"] = {"Y": [2, 0, 1, 3], "Y_h": [1, 0, 2], "Y_c": [1, 0, 2]} if layout else {}
        entry["dtype"] = np.dtype(dtype).name
    manifest.append(entry)


def main(out):
    os.makedirs(out, exist_ok=True)
    manifest = []
    short = [5, 2, 3]  # sequence_lens: one full entry, two shorter ones
    # LSTM
    make(out, manifest, "lstm_bidi_lengths_states_peepholes", "LSTM", direction="bidirectional",
         lengths=short, initial=True, peepholes=True)
    make(out, manifest, "lstm_layout1_bidi_clip", "LSTM", direction="bidirectional", layout=1,
         lengths=[4, 5, 1], initial=True, peepholes=True, clip=0.4)
    make(out, manifest, "lstm_reverse_lengths_activations", "LSTM", direction="reverse",
         lengths=short, initial=True,
         activations=["HardSigmoid", "LeakyRelu", "Softsign"],
         activation_alpha=[0.3, 0.05], activation_beta=[0.45])
    make(out, manifest, "lstm_bidi_activations_both_dirs", "LSTM", direction="bidirectional",
         lengths=short, activations=["Sigmoid", "Elu", "ScaledTanh", "HardSigmoid", "Softplus",
                                     "Affine"],
         activation_alpha=[0.9, 0.7, 0.25, 0.8], activation_beta=[1.3, 0.4, 0.1])
    make(out, manifest, "lstm_input_forget_no_bias", "LSTM", bias=False, initial=True,
         input_forget=1)
    make(out, manifest, "lstm_only_y_h", "LSTM", direction="bidirectional", lengths=short,
         outputs=("Y_h",))
    make(out, manifest, "lstm_only_y_c_layout1", "LSTM", layout=1, lengths=short, initial=True,
         outputs=("Y_c",))
    make(out, manifest, "lstm_double_bidi", "LSTM", direction="bidirectional", lengths=short,
         initial=True, peepholes=True, dtype=np.float64)
    # GRU
    make(out, manifest, "gru_bidi_lengths_states_lbr", "GRU", direction="bidirectional",
         lengths=short, initial=True, linear_before_reset=1)
    make(out, manifest, "gru_bidi_lengths_states", "GRU", direction="bidirectional",
         lengths=short, initial=True)
    make(out, manifest, "gru_layout1_clip_activations", "GRU", direction="bidirectional",
         layout=1, lengths=[2, 5, 4], initial=True, clip=0.3,
         activations=["HardSigmoid", "ScaledTanh", "Sigmoid", "Softsign"],
         activation_alpha=[0.25, 0.8], activation_beta=[0.5, 1.2])
    make(out, manifest, "gru_reverse_lbr_clip", "GRU", direction="reverse", lengths=short,
         initial=True, linear_before_reset=1, clip=0.5)
    make(out, manifest, "gru_only_y_h_layout1", "GRU", layout=1, initial=True,
         outputs=("Y_h",))
    make(out, manifest, "gru_double_bidi_lbr", "GRU", direction="bidirectional", lengths=short,
         initial=True, linear_before_reset=1, dtype=np.float64)
    # RNN
    make(out, manifest, "rnn_bidi_lengths_states", "RNN", direction="bidirectional",
         lengths=short, initial=True)
    make(out, manifest, "rnn_layout1_clip_activations", "RNN", direction="bidirectional",
         layout=1, lengths=[1, 5, 3], initial=True, clip=1.2,
         activations=["Relu", "ThresholdedRelu"], activation_alpha=[0.1])
    make(out, manifest, "rnn_reverse_opset7", "RNN", direction="reverse", lengths=short,
         initial=True, opset=7)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
