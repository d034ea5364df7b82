# %% [markdown]
# # Visual-field overlap decides: pinwheels or salt-and-pepper
# The paper's mechanism: neighbouring neurons that see overlapping patches of the visual field develop similar
# preferred orientations. Two small spiking sheets (16x16 E neurons, 1,500 whitened photographs: enough to see
# it) are trained with the macaque preset (stride 1, overlap 7/8) and the mouse preset (stride 8, no overlap);
# the figure shows their orientation maps measured with gratings.

# %%
import numpy as np

from iclr25.utils.plotting import show, subplots
from iclr25.v1_topology import maps, measure_orientation_map, preset_config, train

results = {}
for species in ("macaque", "mouse"):
    cfg = preset_config(species, n_side=16)
    net = train(cfg, 1500, seed=0, desc=None).net
    om = measure_orientation_map(net)
    results[species] = (cfg, om)
    print(f"{species:7s} stride {cfg.stride} (overlap {1 - cfg.stride / cfg.patch:.3f}): median OSI "
          f"{np.median(om.osi):.2f}, neighbour |dtheta| {maps.neighbour_orientation_difference(om.z):.1f} deg "
          f"(random map: 45), wiring cost {maps.map_wiring_cost(om.z):.2f} sites")

# %%
fig, ax = subplots(1, 2, size=(3.8, 3.4), layout="constrained")
for a, (species, (cfg, om)) in zip(ax, results.items()):
    im = a.imshow(np.degrees(om.theta), cmap="hsv", vmin=0, vmax=180, interpolation="nearest")
    a.set_title(f"{species}: overlap {1 - cfg.stride / cfg.patch:.2f}\n"
                f"neighbour |Δθ| {maps.neighbour_orientation_difference(om.z):.0f}°", fontsize=9)
    a.set(xlabel="E neuron column", ylabel="E neuron row")
    a.grid(False)
    fig.colorbar(im, ax=a, label="preferred orientation (deg)", shrink=0.7)
fig.suptitle("Orientation maps of two trained spiking sheets")
show(fig)
