# %% [markdown]
# # Finding hidden progress in neural recordings
#
# The analysis you would run on real recordings (days x trials x neurons), here on recordings generated from the
# trained network with a known ground truth, and on a null control whose network is frozen at E0 (training accuracy
# 1). The figure shows behaviour and decoding per day, and the per-day margin with its trend test.

# %%
from iclr25.overtraining import analyze_recordings, simulate_recordings
from iclr25.utils.plotting import show, subplots

# %% [markdown]
# 12 recording days (log-spaced over training to 20 E0), 16 recorded cells, 4 noisy trials of each of 40 trained
# and 40 probe (held-out) stimuli per day, and a choice per trial from a saturating behavioural readout.
# `learning=False` freezes the network at E0 on every day: there is no hidden progress to find.

# %%
learning = analyze_recordings(simulate_recordings(n_days=12, n_neurons=16, seed=0), n_permutations=1000, seed=0)
# the control is tested from the same reference day (the learning recordings' behaviour plateau)
frozen = analyze_recordings(simulate_recordings(n_days=12, n_neurons=16, learning=False, seed=0),
                            reference_day=learning.reference_day, n_permutations=1000, seed=0)
results = {"learning": learning, "frozen at E0 (null control)": frozen}
for name, res in results.items():
    t = res.margin_trend
    print(f"{name}: margin trend from day {res.days[res.reference_day]} on, Spearman rho {t.rho:+.2f}, "
          f"permutation p = {t.p_value:.3f}")

# %% [markdown]
# The reference day (marked) is the first day at the behavioural plateau; trends are tested from it on. On the
# learning recordings the decoders' accuracy keeps rising after it (left), and so does the margin (right), which
# shows no significant trend on the frozen recordings.

# %%
res = learning
ref = res.days[res.reference_day]
fig, (ax0, ax1) = subplots(1, 2, size=(4.2, 3.4), layout="constrained")
ax0.semilogx(res.days, res.behaviour, "o-", ms=4, label="behaviour (fraction correct)")
ax0.semilogx(res.days, res.decoding_accuracy, "s-", ms=4, label="decoder, cross-validated")
ax0.semilogx(res.days, res.probe_accuracy, "^-", ms=4, label="decoder on probe stimuli")
ax0.set(title="learning recordings: behaviour, decoding", xlabel="recording day (training epoch)", ylabel="accuracy")
for (name, r), style in zip(results.items(), ("o-", "s--")):
    t = r.margin_trend
    ax1.semilogx(r.days, r.signed_margin, style, ms=4, label=f"{name}: rho {t.rho:+.2f}, p {t.p_value:.2f}")
ax1.set(title="per-day margin (trial-averaged)", xlabel="recording day (training epoch)",
        ylabel="normalised SVM margin")
for ax in (ax0, ax1):
    ax.axvline(ref, c="0.4", ls=":", label="reference day (behaviour plateau)" if ax is ax0 else None)
    ax.legend(fontsize=8)
show(fig)
