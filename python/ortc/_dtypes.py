"""Element types: ONNX TensorProto.DataType numbers (what the C API uses) and numpy dtypes."""

import numpy as np

from ._errors import OrtcError

# The types the runtime's tensors hold (ortc::DataType); strings are not passed through the C API.
_NUMPY_OF = {
    1: np.dtype(np.float32),
    2: np.dtype(np.uint8),
    3: np.dtype(np.int8),
    4: np.dtype(np.uint16),
    5: np.dtype(np.int16),
    6: np.dtype(np.int32),
    7: np.dtype(np.int64),
    9: np.dtype(np.bool_),
    10: np.dtype(np.float16),
    11: np.dtype(np.float64),
    12: np.dtype(np.uint32),
    13: np.dtype(np.uint64),
}
_ONNX_OF = {dtype: number for number, dtype in _NUMPY_OF.items()}

# Types the runtime knows that have no numpy dtype, for the messages.
_NAMES_WITHOUT_NUMPY = {8: "string", 16: "bfloat16"}


def type_name(number):
    """A readable name of an ONNX element type number."""
    if number in _NUMPY_OF:
        return _NUMPY_OF[number].name
    return _NAMES_WITHOUT_NUMPY.get(number, "ONNX type %d" % number)


def numpy_dtype(number):
    """The numpy dtype of an ONNX element type number, or None where numpy has none."""
    return _NUMPY_OF.get(number)


def output_numpy_dtype(number, name):
    """The numpy dtype for output `name` of ONNX type `number`; OrtcError NOT_IMPLEMENTED if
    numpy has none."""
    dtype = _NUMPY_OF.get(number)
    if dtype is None:
        raise OrtcError("NOT_IMPLEMENTED", "output %r is %s, which numpy has no dtype for: name "
                        "the other outputs in output_names" % (name, type_name(number)))
    return dtype


def onnx_type(dtype, what):
    """The ONNX element type number of a numpy dtype; OrtcError NOT_IMPLEMENTED if unsupported."""
    number = _ONNX_OF.get(np.dtype(dtype))
    if number is None:
        supported = ", ".join(d.name for d in _NUMPY_OF.values())
        raise OrtcError("NOT_IMPLEMENTED", "%s has dtype %s; the runtime takes %s"
                        % (what, np.dtype(dtype), supported))
    return number
