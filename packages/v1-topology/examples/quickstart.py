# %% [markdown]
# # iclr25-v1-topology quickstart
# The `maps` API on a synthetic pinwheel map, then a tiny spiking network trained on whitened photographs.

# %%
import numpy as np

from iclr25.v1_topology import NetworkConfig, gaussian_random_field, maps, measure_orientation_map, train

z = gaussian_random_field(64, 8.0, seed=0)  # a narrow-band random map: about pi pinwheels per Lambda^2
s = maps.summarize_map(z)
print(f"Lambda {s.spacing:.1f} sites, {s.n_pinwheels} pinwheels, density {s.density:.2f} per Lambda^2")

# %%
net = train(NetworkConfig(n_side=12, stride=1, r_ee=1.5, r_ei=3.0, r_ii=3.0), 1000, seed=0, desc=None).net
om = measure_orientation_map(net)
print(f"median OSI {np.median(om.osi):.2f}, neighbour |dtheta| {maps.neighbour_orientation_difference(om.z):.0f} deg")
