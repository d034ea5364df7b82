# %% [markdown]
# # Intermediate shapes: fitted level set against SDF blend
#
# A bar twisted by 90° about its long axis: the shipped fit of f(x, t) and v(x) (5 % sparse correspondences)
# against the exact intermediate shape and the SDF blend (1 − t)·f_0 + t·f_1 of the exact end shapes, the
# usual baseline. The figure cuts all three at height z = 0.6, where the cross-section turns by about 79° in
# total: the blend's zero level set loses the corners and about a third of the area half-way; the fitted one
# turns with the exact shape and keeps most of its area.

# %%
import numpy as np

from iclr25.implicit_deform import make_pair
from iclr25.implicit_deform.pretrained import pretrained
from iclr25.utils.plotting import show, subplots

pair = make_pair("bar", "twist", n_points=4000, mesh_resolution=48)  # exact intermediates for every t
res = pretrained("bar-twist")  # = fit(pair, config=DeformConfig.preset("test"), seed=0), shipped

# %% [markdown]
# Signed distances on a 150 × 150 grid in the plane z = 0.6, and the area inside each zero level set.

# %%
g = np.linspace(-0.45, 0.45, 150)
X, Y = np.meshgrid(g, g)
plane = np.stack([X.ravel(), Y.ravel(), np.full(X.size, 0.6)], axis=1)
cell = (g[1] - g[0]) ** 2
f0 = pair.sdf_function(0.0, n_surface=30000)(plane)  # exact signed distance of the source
f1 = pair.sdf_function(1.0, n_surface=30000)(plane)  # and of the target
times = (0.25, 0.5, 0.75)
fields = {}
for t in times:
    exact = pair.shape.sdf(pair.deformation.inverse(plane, t))  # pulled back to the source: same zero level set
    fields[t] = {"exact": exact, "fitted f(x, t)": res.sdf(plane, t),
                 "SDF blend": (1 - t) * f0 + t * f1}
    areas = ", ".join(f"{name} {np.sum(f < 0) * cell:.3f}" for name, f in fields[t].items())
    print(f"t = {t:.2f}: cross-section area {areas}")

# %%
fig, axes = subplots(1, 3, size=(2.9, 3.0), sharey=True)
styles = {"exact": ("k", "-"), "fitted f(x, t)": ("C0", "-"), "SDF blend": ("C1", "--")}
for ax, t in zip(axes, times):
    for name, f in fields[t].items():
        color, ls = styles[name]
        ax.contour(X, Y, f.reshape(X.shape), levels=[0.0], colors=color, linestyles=ls, linewidths=1.6)
        ax.plot([], [], color=color, linestyle=ls, label=name)  # a legend entry for the contour
    ax.set(title=f"t = {t}", xlabel="x", aspect="equal")
axes[0].set_ylabel("y")
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncols=3, fontsize=9)
fig.suptitle("Cross-section of the twisted bar at z = 0.6: zero level sets")
fig.tight_layout(rect=(0, 0.08, 1, 1))
show(fig)
