# %% [markdown]
# # Why the margin keeps growing: GD turns to the max margin
#
# The theory behind hidden progress, in its exact linear form: on linearly separable data, gradient descent on the
# logistic loss never stops. After every example is classified right, the weights keep growing and their direction
# turns, slowly (at rate 1 / log t), to the hard-margin SVM direction, while the loss falls like 1 / t. The figure
# shows the data with both directions, and the two rates.

# %%
import numpy as np

from iclr25.overtraining import linear_logistic_gd, svm_margin
from iclr25.overtraining.experiments import separable_blobs
from iclr25.utils.plotting import show, subplots

# %% [markdown]
# 40 points of two Gaussian blobs pushed apart along a random direction until a gap of 1 separates them through the
# origin (`separable_blobs`, the package's theory check; no bias, as in Soudry et al. 2018).
# The SVM comes from the package's exact solver; GD runs 100,000 steps from w = 0 with step size 1.

# %%
X, y = separable_blobs(40, 2, gap=1.0, seed=0)
svm = svm_margin(X, y, fit_intercept=False)
gd = linear_logistic_gd(X, y, lr=1.0, n_steps=100_000, n_checkpoints=30)
steps, dirs = gd.steps[1:], gd.directions()[1:]  # step 0 is w = 0, which has no direction
cosine = dirs @ svm.w
print(f"SVM margin {svm.margin:.3f}; training accuracy 1 from step {steps[np.argmax((X @ gd.w[1:].T * y[:, None] > 0).all(0))]}")
print(f"1 - cos(w_t, w_svm): {1 - cosine[0]:.1e} at step {steps[0]} -> {1 - cosine[-1]:.1e} at step {steps[-1]}")
print(f"t * loss(t): {steps[5] * gd.loss[6]:.3f} at step {steps[5]} -> {steps[-1] * gd.loss[-1]:.3f} (constant: loss ~ 1/t)")

# %%
fig, axes = subplots(1, 3, size=(3.4, 3.3), layout="constrained")
ax = axes[0]
ax.scatter(*X[y > 0].T, s=12, marker="o", label="class +1")
ax.scatter(*X[y < 0].T, s=12, marker="s", label="class -1")
lim = np.abs(X).max() * 1.05
for w, style, name in ((dirs[2], ":", f"GD, step {steps[2]}"), (dirs[-1], "--", f"GD, step {steps[-1]}"),
                       (svm.w, "-", "max-margin (SVM)")):
    b = np.array([-w[1], w[0]]) * lim * 1.5  # the decision boundary w.x = 0
    ax.plot([-b[0], b[0]], [-b[1], b[1]], style, c="k" if name.startswith("max") else "0.5", lw=1.2, label=name)
ax.set(title="decision boundaries", xlabel="x1", ylabel="x2", xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
axes[1].loglog(steps, 1 - cosine, "o-", ms=3)
axes[1].set(title="direction turns to the SVM", xlabel="GD step t", ylabel="1 - cos(w_t, w_SVM)")
axes[2].semilogx(steps, steps * gd.loss[1:], "o-", ms=3, c="tab:green")
axes[2].set(title="loss falls like 1 / t", xlabel="GD step t", ylabel="t x logistic loss(w_t)")
show(fig)
