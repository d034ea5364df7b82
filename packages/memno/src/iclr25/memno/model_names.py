"""The model names :func:`~iclr25.memno.make_model` accepts.

A module of its own without torch, so that the command line can offer them as choices while ``iclr25 memno
--help`` stays light.
"""

__all__ = ["MODEL_NAMES"]

MODEL_NAMES = ("memno", "memno-gru", "memno-lstm", "ffno", "ffno-history", "fno", "memno-fno")
