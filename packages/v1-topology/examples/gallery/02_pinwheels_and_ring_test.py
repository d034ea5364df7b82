# %% [markdown]
# # Pinwheels, column spacing and the ring test of any map
# The `maps` API reads an orientation map from anywhere (a model, an imaging experiment). A map with periodic
# hypercolumns has a ring in its power spectrum; only then are column spacing Λ and pinwheel density per Λ²
# defined. The figure shows a narrow-band random map with its pinwheels (density near π per Λ²) and the radial
# spectra of that map and of a salt-and-pepper map, which has no ring. (The random field is ideal: it has no
# power off its ring, hence its huge ring ratio; the test asks for at least 10.)

# %%
import numpy as np

from iclr25.utils.plotting import show, subplots
from iclr25.v1_topology import gaussian_random_field, maps, salt_and_pepper_map

smooth = gaussian_random_field(64, 10.0, seed=0)  # complex z: preferred orientation = arg(z) / 2
salt = salt_and_pepper_map(64, seed=0)  # independent orientations (radians), like rodent V1
for name, m in (("random-field map", smooth), ("salt-and-pepper", salt)):
    s = maps.summarize_map(m)
    print(f"{name:16s} ring ratio {s.ring_ratio:.3g}, hypercolumns {s.hypercolumns}, "
          f"{s.n_pinwheels} pinwheels, " + (f"Λ {s.spacing:.2f}, density {s.density:.2f} per Λ²" if s.hypercolumns
                                            else "Λ and density undefined"))
pw = maps.pinwheels(smooth)

# %%
fig, ax = subplots(1, 2, size=(4.3, 3.6), layout="constrained")
theta = np.degrees(np.angle(smooth) / 2) % 180
im = ax[0].imshow(theta, cmap="hsv", vmin=0, vmax=180, interpolation="nearest")
for q, mk, lab in ((1, "o", "pinwheel +1"), (-1, "s", "pinwheel −1")):
    p = pw.positions[pw.charges == q]
    ax[0].scatter(p[:, 1], p[:, 0], marker=mk, s=14, facecolor="white", edgecolor="k", lw=0.7, label=lab)
ax[0].set(xlabel="column (sites)", ylabel="row (sites)", title="random-field map, Λ = 10 sites")
ax[0].grid(False)
ax[0].legend(fontsize=8, loc="upper right", framealpha=0.8, frameon=True)
fig.colorbar(im, ax=ax[0], label="preferred orientation (deg)", shrink=0.7)
for name, m in (("random-field map", smooth), ("salt-and-pepper", salt)):
    k, P = maps.power_spectrum_radial(m)
    ax[1].plot(k[1:], P[1:] / P[1:].max(), label=name)
ax[1].axvline(1 / 10, color="k", ls="--", lw=0.8, label="1/Λ")
ax[1].set(xlabel="spatial frequency k (cycles per site)", ylabel="radial power / peak", title="ring test")
ax[1].legend(fontsize=8)
fig.suptitle("Reading an orientation map: pinwheels and the spectral ring")
show(fig)
