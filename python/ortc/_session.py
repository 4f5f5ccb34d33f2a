"""ortc.Session: a compiled (or plain) ONNX model loaded by the runtime, run on numpy arrays."""

import ctypes
import json
import os
from dataclasses import dataclass

import numpy as np

from ._dtypes import numpy_dtype, onnx_type, output_numpy_dtype, type_name
from ._errors import OrtcError
from ._library import TensorView, check, library

_POLICY_REQUIRE_OPTIMAL = 1  # OrtcVerdictPolicy's ORTC_POLICY_REQUIRE_OPTIMAL


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of a session.

    name: its name in the model.
    dtype: its numpy dtype, or None for a type numpy has none for (bfloat16; see elem_type).
    shape: a tuple with an int per fixed dimension and None per dimension decided at run time.
    elem_type: its ONNX TensorProto.DataType number, as the C API gives it.
    """

    name: str
    dtype: object
    shape: tuple
    elem_type: int

    def __repr__(self):
        dtype = self.dtype.name if self.dtype is not None else type_name(self.elem_type)
        return "TensorInfo(%r, %s, %s)" % (self.name, dtype, self.shape)


def _infos(lib, handle, side):
    """The TensorInfos of a session's inputs (side "input") or outputs (side "output")."""
    count = getattr(lib, "ortc_session_%s_count" % side)(handle)
    name_of = getattr(lib, "ortc_session_%s_name" % side)
    dtype_of = getattr(lib, "ortc_session_%s_dtype" % side)
    rank_of = getattr(lib, "ortc_session_%s_rank" % side)
    shape_of = getattr(lib, "ortc_session_%s_shape" % side)
    infos = []
    for i in range(count):
        dims = shape_of(handle, i)
        shape = tuple(None if dims[d] < 0 else dims[d] for d in range(rank_of(handle, i)))
        number = dtype_of(handle, i)
        infos.append(TensorInfo(name_of(handle, i).decode("utf-8"), numpy_dtype(number), shape,
                                number))
    return infos


def _to_numpy(lib, name, tensor):
    """A numpy copy of an output tensor of the runtime (which the caller still releases)."""
    dtype = output_numpy_dtype(lib.ortc_tensor_dtype(tensor), name)
    dims = lib.ortc_tensor_shape(tensor)
    shape = tuple(dims[d] for d in range(lib.ortc_tensor_rank(tensor)))
    array = np.empty(shape, dtype)
    size = lib.ortc_tensor_byte_size(tensor)
    if size != array.nbytes:
        # Copying either amount would read or write past one of the two buffers.
        raise OrtcError(None, "output %r: the runtime gave %d bytes for a %s tensor of shape %s"
                        % (name, size, dtype.name, shape))
    if size:
        ctypes.memmove(array.ctypes.data, lib.ortc_tensor_data(tensor), size)
    return array


class Session:
    """A model loaded by the ortc runtime: a model_ctx.onnx from ortc.compile, or a plain ONNX
    model the CPU kernels cover.

    path: the model file; the context binaries it names are found beside it.
    device_json: the device the version gate checks the binaries against, as
        `ortc check --print-device` writes it (JSON text or a dict); None: this machine.
    threads: threads each run uses inside its ops; None or 0: one per physical core.
    require_optimal: refuse (OrtcError MODEL_REQUIRES_COMPILATION) binaries the gate says a
        recompile would serve better, instead of running them.
    provider_options: backend run-time options, {"cuda": {"enable_cuda_graph": "0"}}.

    run() may be called from several threads at once (the runtime allows it, and ctypes releases
    the GIL during the call); close() must not race a run. Use it in a `with` block, or call
    close(), to free the runtime's memory at a known point rather than at garbage collection.
    """

    def __init__(self, path, device_json=None, threads=None, require_optimal=False,
                 provider_options=None):
        self._handle = None
        self._lib = lib = library()
        options = ctypes.c_void_p()
        check(lib.ortc_session_options_create(ctypes.byref(options)))
        try:
            if threads is not None:
                check(lib.ortc_session_options_set_intra_op_threads(options, int(threads)))
            if require_optimal:
                check(lib.ortc_session_options_set_policy(options, _POLICY_REQUIRE_OPTIMAL))
            if device_json is not None:
                text = device_json if isinstance(device_json, str) else json.dumps(device_json)
                check(lib.ortc_session_options_set_device_json(options, text.encode("utf-8")))
            for backend, values in (provider_options or {}).items():
                for key, value in values.items():
                    check(lib.ortc_session_options_set_provider_option(
                        options, backend.encode("utf-8"), key.encode("utf-8"),
                        str(value).encode("utf-8")))
            handle = ctypes.c_void_p()
            check(lib.ortc_session_create_with_options(os.fsencode(os.fspath(path)), options,
                                                       ctypes.byref(handle)))
        finally:
            # The session keeps its own copy of the options.
            lib.ortc_session_options_release(options)
        self._handle = handle
        self.inputs = _infos(lib, handle, "input")
        self.outputs = _infos(lib, handle, "output")
        self._input_dtypes = {info.name: info.dtype for info in self.inputs}

    def run(self, feeds, output_names=None):
        """Runs the model on `feeds` ({input name: array}) and returns {output name: ndarray}.

        output_names: the outputs to compute, in the order wanted; None: all, in model order.
        Arrays are passed with their own dtype (the runtime refuses a wrong one); lists and
        scalars are converted to the input's dtype. Raises OrtcError on a runtime failure.
        """
        lib = self._lib
        handle = self._open_handle()
        names = list(feeds)
        # Held until the call returns: the views point into these arrays and shape buffers.
        arrays = [self._as_array(name, feeds[name]) for name in names]
        shapes = [(ctypes.c_int64 * a.ndim)(*a.shape) for a in arrays]
        views = (TensorView * len(arrays))()
        for view, name, array, shape in zip(views, names, arrays, shapes):
            view.dtype = onnx_type(array.dtype, "input %r" % name)
            view.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
            view.rank = array.ndim
            view.data = array.ctypes.data
        input_names = (ctypes.c_char_p * len(names))(*(n.encode("utf-8") for n in names))
        if output_names is None:
            # No names: the runtime computes every output, in model order.
            wanted = [info.name for info in self.outputs]
            requested = (ctypes.c_char_p * 0)()
        else:
            wanted = list(output_names)
            requested = (ctypes.c_char_p * len(wanted))(*(n.encode("utf-8") for n in wanted))
        tensors = (ctypes.c_void_p * len(wanted))()
        check(lib.ortc_session_run_outputs(handle, input_names, views, len(names), requested,
                                           len(requested), tensors))
        try:
            return {name: _to_numpy(lib, name, tensor) for name, tensor in zip(wanted, tensors)}
        finally:
            for tensor in tensors:
                lib.ortc_tensor_release(tensor)

    def close(self):
        """Releases the runtime's session; further runs raise ValueError. Safe to call twice."""
        if self._handle is not None:
            self._lib.ortc_session_release(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # __init__ may have failed before a session existed.
        if getattr(self, "_handle", None) is not None:
            self.close()

    def __repr__(self):
        state = "closed" if self._handle is None else "inputs=%s, outputs=%s" % (
            self.inputs, self.outputs)
        return "ortc.Session(%s)" % state

    def _open_handle(self):
        if self._handle is None:
            raise ValueError("run on a closed ortc.Session")
        return self._handle

    def _as_array(self, name, value):
        """`value` as a C-contiguous, aligned array the runtime can read in place."""
        if not isinstance(value, np.ndarray):
            value = np.asarray(value, dtype=self._input_dtypes.get(name))
        if not (value.flags.c_contiguous and value.flags.aligned):
            value = value.copy(order="C")
        return value
