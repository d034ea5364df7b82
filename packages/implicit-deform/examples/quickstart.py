# %% [markdown]
# # iclr25-implicit-deform quickstart
# Deform a rectangular bar into its 90-degree twist: fit a space-time SDF f(x, t) and a velocity field v(x)
# from the two point clouds and 5 % sparse correspondences (the shipped fit, loaded), then compare the intermediate shape at t = 0.5
# with the exact one and with the SDF linear blend.

# %%
from iclr25.implicit_deform import chamfer, make_pair
from iclr25.implicit_deform.baselines import sdf_blend_mesh
from iclr25.implicit_deform.metrics import sample_mesh
from iclr25.implicit_deform.pretrained import pretrained, pretrained_meta

pair = make_pair("bar", "twist", n_points=4000, mesh_resolution=48)
# the shipped fit of this pair; fit(pair, config=DeformConfig.preset("test"), seed=0) makes it again (~20 s)
res = pretrained("bar-twist")
print("made by:", pretrained_meta("bar-twist")["command"], "seed", pretrained_meta("bar-twist")["seed"])

# %% [markdown]
# Marching cubes of f(., 0.5) against the exact twisted bar at t = 0.5, and the same for the SDF blend.

# %%
gt, _ = pair.gt_points(0.5, 5000)
ours = res.mesh(0.5, resolution=48)
blend = sdf_blend_mesh(lambda x: pair.gt_sdf(x, 0.0, n_surface=30000), lambda x: pair.gt_sdf(x, 1.0, n_surface=30000),
                       0.5, (-1.0,) * 3, (1.0,) * 3, 48)
print(f"Chamfer at t=0.5: ours {chamfer(sample_mesh(ours, 5000)[0], gt):.4f}, "
      f"SDF blend {chamfer(sample_mesh(blend, 5000)[0], gt):.4f}")
print(f"volume: ours {ours.volume:.4f}, exact {pair.shape.volume:.4f}")
