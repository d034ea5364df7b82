"""MemNO: Markovian Fourier layers per time slice, with a memory layer over the history in between.

A trajectory ``u`` of shape ``(batch, T, X)`` goes through

1. a pointwise lifting ``E(u_t, x) ∈ R^d`` (with the last ``history`` frames as extra channels when history
   stacking is on);
2. ``n_layers`` Markovian layers (FFNO or FNO), applied to every time slice with shared weights;
3. a memory layer (S4D, GRU or LSTM) inserted after ``memory_position`` Markovian layers, run along time for
   every (grid point, channel) with a residual connection ``z ← z + Mem(z)``;
4. a pointwise projection ``Q`` to the next state: ``û_{t+1} = u_t + Q(z_t)`` (or ``Q(z_t)`` with
   ``residual=False``).

Output ``t`` depends only on inputs ``≤ t`` (every memory layer is causal), so one pass over a trajectory
trains all next-step predictions at once (teacher forcing), and :meth:`MemNO.step` streams one frame at a
time with a cached memory state.

The layer placement, widths and the residual next-step parametrisation are reconstructed (no official code):
they are all constructor arguments.
"""

from __future__ import annotations

import torch
from torch import nn

from .layers import FeedForward, FFNOLayer, FNOLayer
from .model_names import MODEL_NAMES
from .s4 import S4D, make_memory
from .training import resolve_device

__all__ = ["MemNO", "MemNOState", "make_model", "MODEL_NAMES"]


class MemNOState:
    """The streaming state of :meth:`MemNO.step`: the memory layer's state and the recent frames."""

    def __init__(self, memory, frames: list[torch.Tensor]) -> None:
        self.memory = memory
        self.frames = frames


class MemNO(nn.Module):
    """Memory Neural Operator (S4FFNO when ``markov="ffno", memory="s4d"``).

    Parameters
    ----------
    markov : {"ffno", "fno"}
        The per-time-slice Markovian layers.
    memory : {"s4d", "gru", "lstm"} or None
        The memory layer over time; ``None`` gives the Markovian baseline with identical Markovian layers.
    width : int
        Channels ``d``.
    n_layers : int
        Number of Markovian layers.
    modes : int
        Fourier modes kept per layer (``k_max``); inputs need at least ``2 (modes − 1)`` grid points.
    memory_position : int
        Number of Markovian layers before the memory layer (0 … n_layers). Reconstructed default: 1.
    d_state : int
        S4D state size ``N``.
    history : int
        Frames stacked as input channels (1 = the current one only; >1 is the history-stacking baseline).
    ff_factor : int
        Expansion of the FFNO feed-forward.
    residual : bool
        Predict the increment ``û_{t+1} − u_t`` rather than ``û_{t+1}``.
    s4_output : {"glu", "linear"}
        The pointwise map after S4D's GELU (GLU as in S4D; "linear" is cheaper per epoch).

    References: MemNO paper (Buitrago Ruiz et al., ICLR 2025) §4, Fig. 2 (S4FFNO); Tran et al. (2023) FFNO;
    Gu et al. (2022) S4D.
    """

    def __init__(self, markov: str = "ffno", memory: str | None = "s4d", *, width: int = 32, n_layers: int = 4,
                 modes: int = 16, memory_position: int = 1, d_state: int = 64, history: int = 1,
                 ff_factor: int = 2, residual: bool = True, s4_output: str = "glu") -> None:
        super().__init__()
        if markov not in ("ffno", "fno"):
            raise ValueError(f"markov must be 'ffno' or 'fno', got {markov!r}")
        for name, v in (("width", width), ("n_layers", n_layers), ("modes", modes), ("history", history)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(memory_position, int) or not 0 <= memory_position <= n_layers:
            raise ValueError(f"memory_position must be an integer in [0, n_layers={n_layers}], got "
                             f"{memory_position!r}")
        self.config = {"markov": markov, "memory": memory, "width": width, "n_layers": n_layers, "modes": modes,
                       "memory_position": memory_position, "d_state": d_state, "history": history,
                       "ff_factor": ff_factor, "residual": residual, "s4_output": s4_output}
        self.markov, self.modes, self.history, self.residual = markov, modes, history, residual
        self.memory_position = memory_position
        self.lift = nn.Linear(history + 1, width)
        if markov == "ffno":
            self.layers = nn.ModuleList(FFNOLayer(width, modes, ff_factor=ff_factor) for _ in range(n_layers))
        else:
            self.layers = nn.ModuleList(FNOLayer(width, modes, activation=i < n_layers - 1)
                                        for i in range(n_layers))
        self.memory = None if memory is None else make_memory(memory, width, d_state=d_state, output=s4_output)
        self.project = nn.Sequential(FeedForward(width, 2), nn.Linear(width, 1))

    # ------------------------------------------------------------------------------------------ helpers
    def _check(self, u: torch.Tensor, rank: int, what: str) -> None:
        if not torch.is_tensor(u):
            raise TypeError(f"u must be a torch tensor, got {type(u).__name__}")
        if not u.is_floating_point():
            raise TypeError(f"u must be a floating-point tensor, got dtype {u.dtype}")
        if u.ndim != rank:
            raise ValueError(f"u must have shape {what}, got rank {u.ndim} with shape {tuple(u.shape)}")
        n_x = u.shape[-1]
        if n_x // 2 + 1 < self.modes:
            raise ValueError(f"u has resolution {n_x}, below what {self.modes} Fourier modes need "
                             f"(at least {2 * (self.modes - 1)} grid points)")

    def _lift(self, frames: torch.Tensor) -> torch.Tensor:
        # frames: (N, X, history) → (N, X, width), with the grid x ∈ [0, 1) as an extra channel
        n, n_x, _ = frames.shape
        grid = torch.arange(n_x, dtype=frames.dtype, device=frames.device) / n_x
        return self.lift(torch.cat([frames, grid[:, None].expand(n, n_x, 1)], dim=-1))

    def _stack_history(self, u: torch.Tensor) -> torch.Tensor:
        # (B, T, X) → (B, T, X, history): frame t, t−1, …, padded with u_0 before the start
        if self.history == 1:
            return u[..., None]
        pad = u[:, :1].expand(-1, self.history - 1, -1)
        padded = torch.cat([pad, u], dim=1)
        t = u.shape[1]
        return torch.stack([padded[:, self.history - 1 - j: self.history - 1 - j + t] for j in range(self.history)],
                           dim=-1)

    # ------------------------------------------------------------------------------------------ forward
    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """Next-step predictions for every time: ``(batch, T, X)`` → ``(batch, T, X)``, causal in time."""
        self._check(u, 3, "(batch, T, X)")
        b, t, n_x = u.shape
        z = self._lift(self._stack_history(u).reshape(b * t, n_x, self.history))
        for layer in self.layers[:self.memory_position]:
            z = layer(z)
        z = self._apply_memory(z, b, t)
        for layer in self.layers[self.memory_position:]:
            z = layer(z)
        out = self.project(z).reshape(b, t, n_x)
        return u + out if self.residual else out

    def _apply_memory(self, z: torch.Tensor, b: int, t: int) -> torch.Tensor:
        if self.memory is None:
            return z
        _, n_x, d = z.shape
        if isinstance(self.memory, S4D):  # S4D convolves along axis 1 of (b, T, X, d): no transpose needed
            return z + self.memory(z.reshape(b, t, n_x, d)).reshape(b * t, n_x, d)
        seq = z.reshape(b, t, n_x, d).transpose(1, 2).reshape(b * n_x, t, d)
        mem = self.memory(seq).reshape(b, n_x, t, d).transpose(1, 2).reshape(b * t, n_x, d)
        return z + mem

    # ---------------------------------------------------------------------------------------- streaming
    def init_state(self, u0: torch.Tensor) -> MemNOState:
        """The empty streaming state for a batch shaped like ``u0`` ``(batch, X)``."""
        self._check(u0, 2, "(batch, X)")
        b, n_x = u0.shape
        mem = None if self.memory is None else self.memory.init_state(b * n_x, device=u0.device)
        return MemNOState(mem, [])

    def step(self, u_t: torch.Tensor, state: MemNOState) -> tuple[torch.Tensor, MemNOState]:
        """Predict ``u_{t+1}`` from the frame ``u_t`` ``(batch, X)`` and the cached state, in O(1) per step.

        Equals the last output of :meth:`forward` on the whole history seen so far.
        """
        self._check(u_t, 2, "(batch, X)")
        b, n_x = u_t.shape
        frames = ([*state.frames, u_t] if state.frames else [u_t] * self.history)[-self.history:]
        z = self._lift(torch.stack(frames[::-1], dim=-1))
        for layer in self.layers[:self.memory_position]:
            z = layer(z)
        z, mem_state = self._step_memory(z, state.memory, b)
        for layer in self.layers[self.memory_position:]:
            z = layer(z)
        out = self.project(z)[..., 0]
        pred = u_t + out if self.residual else out
        return pred, MemNOState(mem_state, frames[-(self.history - 1):] if self.history > 1 else [])

    def _step_memory(self, z: torch.Tensor, mem_state, b: int):
        if self.memory is None:
            return z, mem_state
        _, n_x, d = z.shape
        y, mem_state = self.memory.step(z.reshape(b * n_x, d), mem_state)
        return z + y.reshape(b, n_x, d), mem_state

    def n_parameters(self) -> int:
        """Number of trainable real parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def make_model(name: str = "memno", *, width: int = 32, n_layers: int = 4, modes: int = 16,
               history: int = 4, seed: int = 0, device: str | torch.device | None = None, **kwargs) -> MemNO:
    """A named model with seeded initial weights, on ``device`` (``None``: ``$ICLR25_DEVICE`` or ``auto``).

    ``"memno"`` (S4FFNO), ``"memno-gru"``, ``"memno-lstm"``, ``"memno-fno"`` (S4 + FNO layers), and the
    Markovian baselines ``"ffno"`` and ``"fno"``; ``"ffno-history"`` stacks the last ``history`` frames as
    input channels. All share the Markovian layers' hyper-parameters. The weights are drawn on the CPU and then
    moved, so a seed gives the same initial model on every device.
    """
    if name not in MODEL_NAMES:
        raise ValueError(f"name must be one of {MODEL_NAMES}, got {name!r}")
    dev = resolve_device(device)
    markov = "fno" if name in ("fno", "memno-fno") else "ffno"
    memory = {"memno": "s4d", "memno-fno": "s4d", "memno-gru": "gru", "memno-lstm": "lstm"}.get(name)
    torch.manual_seed(seed)
    return MemNO(markov, memory, width=width, n_layers=n_layers, modes=modes,
                 history=history if name == "ffno-history" else 1, **kwargs).to(dev)


#: The files ``iclr25 memno train`` writes to its --out folder; the manifest (iclr25.utils.checkpoints) is last.
TRAINED_FILES = ("model.pt", "results.json")


def save_trained(folder, name: str, model: MemNO, write_results) -> None:
    """Save a trained ``model`` (named ``name``) to ``folder`` as a whole checkpoint: the previous manifest is
    dropped, ``model.pt`` and ``results.json`` (``write_results(path)``) are written atomically, and
    ``manifest.json`` (each part's SHA-256) last, with the weights on the CPU whatever the model's device, so a save cut short, or parts of two runs, are refused by
    :func:`load_trained`."""
    from pathlib import Path  # noqa: PLC0415

    from iclr25.utils.checkpoints import start_save, write_manifest  # noqa: PLC0415
    from iclr25.utils.device import to_cpu  # noqa: PLC0415
    from iclr25.utils.io import atomic_path  # noqa: PLC0415

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    start_save(folder)
    with atomic_path(folder / "model.pt") as tmp:
        try:
            torch.save({"name": name, "config": model.config, "state_dict": to_cpu(model.state_dict())}, tmp)
        except RuntimeError as exc:  # torch's writer reports a full disk (or a file size limit) so
            raise OSError(f"cannot write {folder / 'model.pt'}: {str(exc).splitlines()[0]}") from None
    write_results(folder / "results.json")
    write_manifest(folder, TRAINED_FILES, meta={"format": 1, "name": name})


def load_trained(folder, *, device: str | torch.device | None = None) -> MemNO:
    """The model ``iclr25 memno train --out FOLDER`` saved, in eval mode on ``device``; refused in one line
    (:class:`iclr25.utils.checkpoints.CheckpointError`, a ``ValueError``) unless the folder's manifest vouches
    for every part (no save cut short, no parts of two runs). Loaded without unpickling (``weights_only``)."""
    from pathlib import Path  # noqa: PLC0415

    from iclr25.utils.checkpoints import CheckpointError, verify_manifest  # noqa: PLC0415

    folder = Path(folder)
    dev = resolve_device(device)
    verify_manifest(folder, TRAINED_FILES, what="trained model")
    try:
        ckpt = torch.load(folder / "model.pt", map_location="cpu", weights_only=True)
        model = MemNO(**ckpt["config"])
        model.load_state_dict(ckpt["state_dict"])
    except (KeyError, TypeError, RuntimeError, ValueError, OSError) as exc:
        raise CheckpointError(f"{folder / 'model.pt'}: not a memno model ({str(exc).splitlines()[0]})") from None
    return model.to(dev).eval()
